package ep_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/ep"
)

const (
	ownerA = "u_abcdefghijklmnopqrstuvwxyz"
	ownerB = "u_234567abcdefghijklmnopqrst"
	uidA   = "0123456789abcdefghijklmnop"
	uidB   = "zyxwvutsrqponmlkjihgfedcba"
	nonce  = "AbCdEfGhIjKlMnOpQrStUvWxYz012345"
	iid    = "inst0123456789abcdefghijkl"
)

var (
	alice = ep.Caller{Owner: ownerA, Actor: "alice", UID: uidA}
	local = ep.Caller{Owner: "local", Actor: "bob", UID: uidB}
)

// TestRequestForms is every request form of spec §2 with its arity, built and parsed back.
func TestRequestForms(t *testing.T) {
	const tail = ownerA + ".alice." + uidA + "." + nonce
	tests := []struct {
		name    string
		req     ep.Request
		subject string
		tokens  int
	}{
		{
			name:    "one untargeted",
			req:     ep.Request{Space: "main", Rail: ep.RailOne, Endpoint: "manager", Command: "spawn", Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.one.manager.spawn." + tail,
			tokens:  10,
		},
		{
			name:    "all untargeted describe, local caller",
			req:     ep.Request{Space: "main", Rail: ep.RailAll, Endpoint: "manager", Command: "describe", Caller: local, Nonce: nonce},
			subject: "cotal.main.ep.all.manager.describe.local.bob." + uidB + "." + nonce,
			tokens:  10,
		},
		{
			name:    "one self",
			req:     ep.Request{Space: "main", Rail: ep.RailOne, Endpoint: "manager", Command: "stop", Mode: ep.ModeSelf, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.one.manager.stop.self." + tail,
			tokens:  11,
		},
		{
			name:    "one owner",
			req:     ep.Request{Space: "main", Rail: ep.RailOne, Endpoint: "manager", Command: "despawn", Mode: ep.ModeOwner, Target: ep.Target{Owner: ownerA}, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.one.manager.despawn.owner." + ownerA + "." + tail,
			tokens:  12,
		},
		{
			name:    "all any",
			req:     ep.Request{Space: "main", Rail: ep.RailAll, Endpoint: "manager", Command: "input", Mode: ep.ModeAny, Target: ep.Target{Owner: "local"}, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.all.manager.input.any.local." + tail,
			tokens:  12,
		},
		{
			name:    "child and ledger",
			req:     ep.Request{Space: "main", Rail: ep.RailOne, Endpoint: "ai.cotal.runs", Command: "run-x", Mode: ep.ModeLedger, Target: ep.Target{Owner: ownerB}, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.one.ai_cotal_runs.run-x.ledger." + ownerB + "." + tail,
			tokens:  12,
		},
		{
			name:    "one handle",
			req:     ep.Request{Space: "main", Rail: ep.RailOne, Endpoint: "auth", Command: "retire-lifecycle", Mode: ep.ModeHandle, Target: ep.Target{Owner: ownerB, Actor: "bob", UID: uidB}, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.one.auth.retire-lifecycle.handle." + ownerB + ".bob." + uidB + "." + tail,
			tokens:  14,
		},
		{
			name:    "all exact",
			req:     ep.Request{Space: "main", Rail: ep.RailAll, Endpoint: "manager", Command: "attach", Mode: ep.ModeExact, Target: ep.Target{Owner: "local", Actor: "bob", UID: uidB}, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.all.manager.attach.exact.local.bob." + uidB + "." + tail,
			tokens:  14,
		},
		{
			name:    "inst untargeted",
			req:     ep.Request{Space: "main", Rail: ep.RailInst, Endpoint: "manager", InstanceID: iid, Command: "status", Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.inst.manager." + iid + ".status." + tail,
			tokens:  11,
		},
		{
			name:    "inst self",
			req:     ep.Request{Space: "main", Rail: ep.RailInst, Endpoint: "manager", InstanceID: iid, Command: "stop", Mode: ep.ModeSelf, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.inst.manager." + iid + ".stop.self." + tail,
			tokens:  12,
		},
		{
			name:    "inst child",
			req:     ep.Request{Space: "main", Rail: ep.RailInst, Endpoint: "manager", InstanceID: iid, Command: "input", Mode: ep.ModeChild, Target: ep.Target{Owner: ownerB}, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.inst.manager." + iid + ".input.child." + ownerB + "." + tail,
			tokens:  13,
		},
		{
			name:    "inst handle",
			req:     ep.Request{Space: "main", Rail: ep.RailInst, Endpoint: "manager", InstanceID: iid, Command: "cancel", Mode: ep.ModeHandle, Target: ep.Target{Owner: ownerB, Actor: "bob", UID: uidB}, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.inst.manager." + iid + ".cancel.handle." + ownerB + ".bob." + uidB + "." + tail,
			tokens:  15,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.req.Subject()
			if err != nil || got != tt.subject {
				t.Fatalf("Subject() = %q, %v; want %q", got, err, tt.subject)
			}
			if n := strings.Count(got, ".") + 1; n != tt.tokens {
				t.Fatalf("%d tokens, want %d", n, tt.tokens)
			}
			parsed, err := ep.ParseRequest(got)
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			want := tt.req
			want.Endpoint, _ = ep.EndpointToken(want.Endpoint)
			if parsed != want {
				t.Fatalf("ParseRequest = %+v; want %+v", parsed, want)
			}
		})
	}
}

// TestParseRequestRefuses covers the subjects that must be ignored.
func TestParseRequestRefuses(t *testing.T) {
	const tail = ownerA + ".alice." + uidA + "." + nonce
	tests := []struct{ name, subject string }{
		{"self with a stray target token", "cotal.main.ep.one.manager.stop.self." + ownerB + "." + tail},
		{"owner without its target", "cotal.main.ep.one.manager.despawn.owner." + tail},
		{"handle with one target token", "cotal.main.ep.one.manager.attach.handle." + ownerB + "." + tail},
		{"exact with the 12-token arity", "cotal.main.ep.one.manager.attach.exact." + ownerB + "." + tail},
		{"untargeted missing the nonce", "cotal.main.ep.one.manager.spawn." + ownerA + ".alice." + uidA},
		{"untargeted with an extra token", "cotal.main.ep.one.manager.spawn." + tail + ".x"},
		{"caller owner neither local nor u_", "cotal.main.ep.one.manager.spawn.alice.alice." + uidA + "." + nonce},
		{"nkey as caller owner", "cotal.main.ep.one.manager.spawn." + strings.Repeat("A", 56) + ".alice." + uidA + "." + nonce},
		{"short nonce", "cotal.main.ep.one.manager.spawn." + ownerA + ".alice." + uidA + ".short"},
		{"bad uid", "cotal.main.ep.one.manager.spawn." + ownerA + ".alice.UPPERCASEUID0123456789ab." + nonce},
		{"reply rail", "cotal.main.ep.reply.manager." + iid + ".1." + tail},
		{"unknown rail", "cotal.main.ep.some.manager.spawn." + tail},
		{"inst without instance", "cotal.main.ep.inst.manager.spawn." + tail},
		{"bad endpoint", "cotal.main.ep.one.Manager.spawn." + tail},
		{"endpoint with an empty label", "cotal.main.ep.one.ai__cotal.spawn." + tail},
		{"bad command", "cotal.main.ep.one.manager.Spawn." + tail},
		{"wildcard", "cotal.main.ep.one.manager.*." + tail},
		{"not cotal", "nats.main.ep.one.manager.spawn." + tail},
		{"retired ctl", "cotal.main.ctl.manager.spawn." + tail},
		{"empty token", "cotal..ep.one.manager.spawn." + tail},
		{"too long", "cotal." + strings.Repeat("s", 1000) + ".ep.one.manager.spawn." + tail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r, err := ep.ParseRequest(tt.subject); !errors.Is(err, ep.ErrNotRail) {
				t.Fatalf("ParseRequest = %+v, %v; want ErrNotRail", r, err)
			}
		})
	}
}

// TestModeWordDecides checks the token after <command> is read as a mode only when it is a mode word; a local caller owner is never one.
func TestModeWordDecides(t *testing.T) {
	// 12 tokens either way: an owner-mode request, or (by counting) an untargeted one with an extra token.
	r, err := ep.ParseRequest("cotal.main.ep.one.manager.despawn.owner.local." + ownerA + ".alice." + uidA + "." + nonce)
	if err != nil || r.Mode != ep.ModeOwner || r.Target.Owner != "local" || r.Caller != alice {
		t.Fatalf("owner form = %+v, %v", r, err)
	}
	// 11 tokens with a local caller owner where a self word would sit: untargeted, never read as a mode.
	if _, err := ep.ParseRequest("cotal.main.ep.inst.manager." + iid + ".status.local.bob." + uidB + "." + nonce); err != nil {
		t.Fatalf("local caller on the inst rail: %v", err)
	}
	// The 11-token self arity with an owner word: the word decides, and owner needs 12.
	if _, err := ep.ParseRequest("cotal.main.ep.one.manager.stop.owner." + ownerA + ".alice." + uidA + "." + nonce); !errors.Is(err, ep.ErrNotRail) {
		t.Fatalf("owner word at the self arity: %v; want ErrNotRail", err)
	}
}

func TestRequestSubjectRefuses(t *testing.T) {
	base := ep.Request{Space: "main", Rail: ep.RailOne, Endpoint: "manager", Command: "spawn", Caller: alice, Nonce: nonce}
	tests := []struct {
		name   string
		modify func(*ep.Request)
		kind   error
	}{
		{"bad nonce", func(r *ep.Request) { r.Nonce = "abc" }, ep.ErrInvalidToken},
		{"nonce with a dot", func(r *ep.Request) { r.Nonce = strings.Repeat("a", 22) + ".x" }, ep.ErrInvalidToken},
		{"mode word as caller owner", func(r *ep.Request) { r.Caller.Owner = "self" }, ep.ErrInvalidToken},
		{"wildcard actor", func(r *ep.Request) { r.Caller.Actor = "*" }, ep.ErrInvalidToken},
		{"long actor", func(r *ep.Request) { r.Caller.Actor = strings.Repeat("a", 65) }, ep.ErrInvalidToken},
		{"endpoint mixing separators", func(r *ep.Request) { r.Endpoint = "ai.cotal_x" }, ep.ErrInvalidToken},
		{"endpoint label ending in -", func(r *ep.Request) { r.Endpoint = "ai.cotal-" }, ep.ErrInvalidToken},
		{"endpoint over 64", func(r *ep.Request) { r.Endpoint = strings.Repeat("a", 65) }, ep.ErrInvalidToken},
		{"command over 32", func(r *ep.Request) { r.Command = strings.Repeat("a", 33) }, ep.ErrInvalidToken},
		{"instance on the one rail", func(r *ep.Request) { r.InstanceID = iid }, ep.ErrInvalidToken},
		{"inst without instance", func(r *ep.Request) { r.Rail = ep.RailInst }, ep.ErrInvalidToken},
		{"unknown rail", func(r *ep.Request) { r.Rail = "reply" }, ep.ErrInvalidToken},
		{"unknown mode", func(r *ep.Request) { r.Mode = "root" }, ep.ErrInvalidToken},
		{"target on untargeted", func(r *ep.Request) { r.Target.Owner = ownerB }, ep.ErrInvalidToken},
		{"target uid on owner mode", func(r *ep.Request) {
			r.Mode, r.Target = ep.ModeOwner, ep.Target{Owner: ownerB, UID: uidB}
		}, ep.ErrInvalidToken},
		{"handle missing uid", func(r *ep.Request) {
			r.Mode, r.Target = ep.ModeHandle, ep.Target{Owner: ownerB, Actor: "bob"}
		}, ep.ErrInvalidToken},
		{"over 1024 bytes", func(r *ep.Request) { r.Space = strings.Repeat("s", 1000) }, ep.ErrSubjectTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base
			tt.modify(&r)
			if s, err := r.Subject(); !errors.Is(err, tt.kind) {
				t.Fatalf("Subject() = %q, %v; want %v", s, err, tt.kind)
			}
		})
	}
	if _, err := base.Subject(); err != nil {
		t.Fatalf("base request refused: %v", err)
	}
}

func TestReplyDerivation(t *testing.T) {
	req := ep.Request{Space: "main", Rail: ep.RailOne, Endpoint: "ai.cotal.manager", Command: "spawn", Caller: alice, Nonce: nonce}
	subject, err := req.Subject()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ep.ParseRequest(subject)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := parsed.ReplySubject(iid, 7)
	want := "cotal.main.ep.reply.ai_cotal_manager." + iid + ".7." + ownerA + ".alice." + uidA + "." + nonce
	if err != nil || reply != want {
		t.Fatalf("ReplySubject = %q, %v; want %q", reply, err, want)
	}
	if n := strings.Count(reply, ".") + 1; n != 11 {
		t.Fatalf("reply has %d tokens, want 11", n)
	}
	got, err := ep.ParseReply(reply)
	wantReply := ep.Reply{Space: "main", Endpoint: "ai_cotal_manager", InstanceID: iid, Epoch: 7, Caller: alice, Nonce: nonce}
	if err != nil || got != wantReply {
		t.Fatalf("ParseReply = %+v, %v; want %+v", got, err, wantReply)
	}
	if !matches(ep.CallerReplyFilter("main", alice), reply) {
		t.Fatalf("caller filter %q misses %q", ep.CallerReplyFilter("main", alice), reply)
	}
	if !matches(ep.ResponderReplyFilter("main", "ai.cotal.manager", iid, 7), reply) {
		t.Fatalf("responder filter misses %q", reply)
	}
	if matches(ep.ResponderReplyFilter("main", "ai.cotal.manager", iid, 8), reply) {
		t.Fatalf("responder filter at another epoch matches %q", reply)
	}
	if matches(ep.CallerReplyFilter("main", local), reply) {
		t.Fatalf("another caller's filter matches %q", reply)
	}
}

func TestParseReplyRefuses(t *testing.T) {
	const tail = ownerA + ".alice." + uidA + "." + nonce
	for _, s := range []string{
		"cotal.main.ep.reply.manager." + iid + ".07." + tail,
		"cotal.main.ep.reply.manager." + iid + ".-1." + tail,
		"cotal.main.ep.reply.manager." + iid + ".18446744073709551616." + tail,
		"cotal.main.ep.reply.manager." + iid + "." + tail,
		"cotal.main.ep.reply._nr._nr._nr." + tail,
		"cotal.main.ep.one.manager.spawn." + tail,
	} {
		if r, err := ep.ParseReply(s); !errors.Is(err, ep.ErrNotRail) {
			t.Errorf("ParseReply(%q) = %+v, %v; want ErrNotRail", s, r, err)
		}
	}
	if _, err := ep.ParseReply("cotal.main.ep.reply.manager." + iid + ".18446744073709551615." + tail); err != nil {
		t.Errorf("max epoch refused: %v", err)
	}
}

func TestNoResponders(t *testing.T) {
	s := ep.NoRespondersSubject("main", alice, nonce)
	want := "cotal.main.ep.reply._nr._nr._nr." + ownerA + ".alice." + uidA + "." + nonce
	if s != want {
		t.Fatalf("NoRespondersSubject = %q; want %q", s, want)
	}
	if !ep.IsNoResponders(s) || !matches(ep.CallerReplyFilter("main", alice), s) {
		t.Fatalf("sentinel %q not recognised or not on the caller's rail", s)
	}
	if ep.IsNoResponders("cotal.main.ep.reply.manager." + iid + ".1." + ownerA + ".alice." + uidA + "." + nonce) {
		t.Fatal("a real reply read as the sentinel")
	}
}

func TestServeSubjects(t *testing.T) {
	one, all, inst := ep.ServeSubjects("my space", "manager", iid, "spawn")
	if one != "cotal.my_space.ep.one.manager.spawn.>" || all != "cotal.my_space.ep.all.manager.spawn.>" ||
		inst != "cotal.my_space.ep.inst.manager."+iid+".spawn.>" {
		t.Fatalf("ServeSubjects = %q %q %q", one, all, inst)
	}
	if g := ep.QueueGroup("ai.cotal.manager"); g != "ai_cotal_manager" {
		t.Fatalf("QueueGroup = %q", g)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("ServeSubjects accepted a wildcard command")
		}
	}()
	ep.ServeSubjects("main", "manager", iid, ">")
}

func TestReservedNames(t *testing.T) {
	for _, n := range []string{"manager", "delivery", "auth"} {
		if !ep.ReservedEndpoint(n) {
			t.Errorf("%s not reserved", n)
		}
		if _, err := ep.EndpointToken(n); err != nil {
			t.Errorf("reserved %s must still build: %v", n, err)
		}
	}
	if ep.ReservedEndpoint("ai.cotal.manager") {
		t.Error("a reverse-DNS name is not reserved")
	}
	if !ep.ReservedCommand("describe") || !ep.ReservedCommand("cancel") || !ep.ValidCommand("describe") {
		t.Error("describe/cancel are reserved but valid commands")
	}
}

func TestNewNonce(t *testing.T) {
	a, b := ep.NewNonce(), ep.NewNonce()
	if len(a) != 32 || !ep.ValidNonce(a) || a == b {
		t.Fatalf("NewNonce = %q, %q", a, b)
	}
}

func TestPlanes(t *testing.T) {
	tests := []struct {
		name string
		got  func() (string, error)
		want string
	}{
		{"event", func() (string, error) { return ep.EventSubject("main", "manager", iid, 3, "spawned") }, "cotal.main.epe.manager." + iid + ".3.spawned"},
		{"fact", func() (string, error) { return ep.FactSubject("main", "manager", "cp", "tok") }, "cotal.main.epf.manager.cp.tok"},
		{"contract hex", func() (string, error) { return ep.ContractSubject("main", strings.Repeat("ab", 32)) }, "cotal.main.epc." + strings.Repeat("ab", 32)},
		{"contract digest", func() (string, error) { return ep.ContractSubject("main", ep.VoidSchemaArtifactDigest) }, "cotal.main.epc." + strings.TrimPrefix(ep.VoidSchemaArtifactDigest, "sha256:")},
		{"goal progress", func() (string, error) { return ep.GoalProgressSubject("main", "manager", iid, 3, alice, "g1") },
			"cotal.main.epe.manager." + iid + ".3.goal." + ownerA + ".alice." + uidA + ".g1.progress"},
		{"goal result", func() (string, error) { return ep.GoalResultSubject("main", "manager", alice, "g1") },
			"cotal.main.epf.manager.goal." + ownerA + ".alice." + uidA + ".g1.result"},
		{"goal progress filter", func() (string, error) { return ep.GoalProgressFilter("main", "manager", alice) },
			"cotal.main.epe.manager.*.*.goal." + ownerA + ".alice." + uidA + ".>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := tt.got(); err != nil || got != tt.want {
				t.Fatalf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	for name, f := range map[string]func() (string, error){
		"no topic":        func() (string, error) { return ep.EventSubject("main", "manager", iid, 1) },
		"wildcard topic":  func() (string, error) { return ep.FactSubject("main", "manager", ">") },
		"dotted topic":    func() (string, error) { return ep.FactSubject("main", "manager", "a.b") },
		"short digest":    func() (string, error) { return ep.ContractSubject("main", "abc") },
		"upper hex":       func() (string, error) { return ep.ContractSubject("main", strings.Repeat("AB", 32)) },
		"bad goal id":     func() (string, error) { return ep.GoalResultSubject("main", "manager", alice, "g.1") },
		"bad goal caller": func() (string, error) { return ep.GoalResultSubject("main", "manager", ep.Caller{}, "g1") },
	} {
		if s, err := f(); err == nil {
			t.Errorf("%s: built %q", name, s)
		}
	}
}

// matches is NATS subject matching, enough to check filters against subjects.
func matches(filter, subject string) bool {
	f, s := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, tok := range f {
		if tok == ">" {
			return len(s) > i
		}
		if i >= len(s) || tok != "*" && tok != s[i] {
			return false
		}
	}
	return len(f) == len(s)
}

func FuzzParseRequest(f *testing.F) {
	const tail = ownerA + ".alice." + uidA + "." + nonce
	f.Add("cotal.main.ep.one.manager.spawn." + tail)
	f.Add("cotal.main.ep.all.manager.stop.self." + tail)
	f.Add("cotal.main.ep.one.manager.despawn.owner.local." + tail)
	f.Add("cotal.main.ep.inst.manager." + iid + ".attach.handle." + ownerB + ".bob." + uidB + "." + tail)
	f.Add("cotal.main.ep.one.manager.stop.owner." + tail)
	f.Fuzz(func(t *testing.T, subject string) {
		r, err := ep.ParseRequest(subject)
		if err != nil {
			if !errors.Is(err, ep.ErrNotRail) {
				t.Fatalf("error %v does not wrap ErrNotRail", err)
			}
			return
		}
		got, err := r.Subject()
		if err != nil || got != subject {
			t.Fatalf("%+v rebuilds to %q, %v; want %q", r, got, err, subject)
		}
		if _, err := r.ReplySubject(iid, 1); err != nil {
			t.Fatalf("parsed request %+v has no reply subject: %v", r, err)
		}
	})
}
