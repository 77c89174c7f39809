package proto_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/ep/proto"
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
	alice = proto.Caller{Owner: ownerA, Actor: "alice", UID: uidA}
	local = proto.Caller{Owner: "local", Actor: "bob", UID: uidB}
)

// TestRequestForms is every request form of spec §2 with its arity, built and parsed back.
func TestRequestForms(t *testing.T) {
	const tail = ownerA + ".alice." + uidA + "." + nonce
	tests := []struct {
		name    string
		req     proto.Request
		subject string
		tokens  int
	}{
		{
			name:    "one untargeted",
			req:     proto.Request{Space: "main", Rail: proto.RailOne, Endpoint: "manager", Command: "spawn", Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.one.manager.spawn." + tail,
			tokens:  10,
		},
		{
			name:    "all untargeted describe, local caller",
			req:     proto.Request{Space: "main", Rail: proto.RailAll, Endpoint: "manager", Command: "describe", Caller: local, Nonce: nonce},
			subject: "cotal.main.ep.all.manager.describe.local.bob." + uidB + "." + nonce,
			tokens:  10,
		},
		{
			name:    "one self",
			req:     proto.Request{Space: "main", Rail: proto.RailOne, Endpoint: "manager", Command: "stop", Mode: proto.ModeSelf, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.one.manager.stop.self." + tail,
			tokens:  11,
		},
		{
			name:    "one owner",
			req:     proto.Request{Space: "main", Rail: proto.RailOne, Endpoint: "manager", Command: "despawn", Mode: proto.ModeOwner, Target: proto.Target{Owner: ownerA}, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.one.manager.despawn.owner." + ownerA + "." + tail,
			tokens:  12,
		},
		{
			name:    "all any",
			req:     proto.Request{Space: "main", Rail: proto.RailAll, Endpoint: "manager", Command: "input", Mode: proto.ModeAny, Target: proto.Target{Owner: "local"}, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.all.manager.input.any.local." + tail,
			tokens:  12,
		},
		{
			name:    "child and ledger",
			req:     proto.Request{Space: "main", Rail: proto.RailOne, Endpoint: "ai.cotal.runs", Command: "run-x", Mode: proto.ModeLedger, Target: proto.Target{Owner: ownerB}, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.one.ai_cotal_runs.run-x.ledger." + ownerB + "." + tail,
			tokens:  12,
		},
		{
			name:    "one handle",
			req:     proto.Request{Space: "main", Rail: proto.RailOne, Endpoint: "auth", Command: "retire-lifecycle", Mode: proto.ModeHandle, Target: proto.Target{Owner: ownerB, Actor: "bob", UID: uidB}, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.one.auth.retire-lifecycle.handle." + ownerB + ".bob." + uidB + "." + tail,
			tokens:  14,
		},
		{
			name:    "all exact",
			req:     proto.Request{Space: "main", Rail: proto.RailAll, Endpoint: "manager", Command: "attach", Mode: proto.ModeExact, Target: proto.Target{Owner: "local", Actor: "bob", UID: uidB}, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.all.manager.attach.exact.local.bob." + uidB + "." + tail,
			tokens:  14,
		},
		{
			name:    "inst untargeted",
			req:     proto.Request{Space: "main", Rail: proto.RailInst, Endpoint: "manager", InstanceID: iid, Command: "status", Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.inst.manager." + iid + ".status." + tail,
			tokens:  11,
		},
		{
			name:    "inst self",
			req:     proto.Request{Space: "main", Rail: proto.RailInst, Endpoint: "manager", InstanceID: iid, Command: "stop", Mode: proto.ModeSelf, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.inst.manager." + iid + ".stop.self." + tail,
			tokens:  12,
		},
		{
			name:    "inst child",
			req:     proto.Request{Space: "main", Rail: proto.RailInst, Endpoint: "manager", InstanceID: iid, Command: "input", Mode: proto.ModeChild, Target: proto.Target{Owner: ownerB}, Caller: alice, Nonce: nonce},
			subject: "cotal.main.ep.inst.manager." + iid + ".input.child." + ownerB + "." + tail,
			tokens:  13,
		},
		{
			name:    "inst handle",
			req:     proto.Request{Space: "main", Rail: proto.RailInst, Endpoint: "manager", InstanceID: iid, Command: "cancel", Mode: proto.ModeHandle, Target: proto.Target{Owner: ownerB, Actor: "bob", UID: uidB}, Caller: alice, Nonce: nonce},
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
			parsed, err := proto.ParseRequest(got)
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			want := tt.req
			want.Endpoint, _ = proto.EndpointToken(want.Endpoint)
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
			if r, err := proto.ParseRequest(tt.subject); !errors.Is(err, proto.ErrNotRail) {
				t.Fatalf("ParseRequest = %+v, %v; want ErrNotRail", r, err)
			}
		})
	}
}

// TestModeWordDecides checks the token after <command> is read as a mode only when it is a mode word; a local caller owner is never one.
func TestModeWordDecides(t *testing.T) {
	// 12 tokens either way: an owner-mode request, or (by counting) an untargeted one with an extra token.
	r, err := proto.ParseRequest("cotal.main.ep.one.manager.despawn.owner.local." + ownerA + ".alice." + uidA + "." + nonce)
	if err != nil || r.Mode != proto.ModeOwner || r.Target.Owner != "local" || r.Caller != alice {
		t.Fatalf("owner form = %+v, %v", r, err)
	}
	// 11 tokens with a local caller owner where a self word would sit: untargeted, never read as a mode.
	if _, err := proto.ParseRequest("cotal.main.ep.inst.manager." + iid + ".status.local.bob." + uidB + "." + nonce); err != nil {
		t.Fatalf("local caller on the inst rail: %v", err)
	}
	// The 11-token self arity with an owner word: the word decides, and owner needs 12.
	if _, err := proto.ParseRequest("cotal.main.ep.one.manager.stop.owner." + ownerA + ".alice." + uidA + "." + nonce); !errors.Is(err, proto.ErrNotRail) {
		t.Fatalf("owner word at the self arity: %v; want ErrNotRail", err)
	}
}

func TestRequestSubjectRefuses(t *testing.T) {
	base := proto.Request{Space: "main", Rail: proto.RailOne, Endpoint: "manager", Command: "spawn", Caller: alice, Nonce: nonce}
	tests := []struct {
		name   string
		modify func(*proto.Request)
		kind   error
	}{
		{"bad nonce", func(r *proto.Request) { r.Nonce = "abc" }, proto.ErrInvalidToken},
		{"nonce with a dot", func(r *proto.Request) { r.Nonce = strings.Repeat("a", 22) + ".x" }, proto.ErrInvalidToken},
		{"mode word as caller owner", func(r *proto.Request) { r.Caller.Owner = "self" }, proto.ErrInvalidToken},
		{"wildcard actor", func(r *proto.Request) { r.Caller.Actor = "*" }, proto.ErrInvalidToken},
		{"long actor", func(r *proto.Request) { r.Caller.Actor = strings.Repeat("a", 65) }, proto.ErrInvalidToken},
		{"endpoint mixing separators", func(r *proto.Request) { r.Endpoint = "ai.cotal_x" }, proto.ErrInvalidToken},
		{"endpoint label ending in -", func(r *proto.Request) { r.Endpoint = "ai.cotal-" }, proto.ErrInvalidToken},
		{"endpoint over 64", func(r *proto.Request) { r.Endpoint = strings.Repeat("a", 65) }, proto.ErrInvalidToken},
		{"command over 32", func(r *proto.Request) { r.Command = strings.Repeat("a", 33) }, proto.ErrInvalidToken},
		{"instance on the one rail", func(r *proto.Request) { r.InstanceID = iid }, proto.ErrInvalidToken},
		{"inst without instance", func(r *proto.Request) { r.Rail = proto.RailInst }, proto.ErrInvalidToken},
		{"unknown rail", func(r *proto.Request) { r.Rail = "reply" }, proto.ErrInvalidToken},
		{"unknown mode", func(r *proto.Request) { r.Mode = "root" }, proto.ErrInvalidToken},
		{"target on untargeted", func(r *proto.Request) { r.Target.Owner = ownerB }, proto.ErrInvalidToken},
		{"target uid on owner mode", func(r *proto.Request) {
			r.Mode, r.Target = proto.ModeOwner, proto.Target{Owner: ownerB, UID: uidB}
		}, proto.ErrInvalidToken},
		{"handle missing uid", func(r *proto.Request) {
			r.Mode, r.Target = proto.ModeHandle, proto.Target{Owner: ownerB, Actor: "bob"}
		}, proto.ErrInvalidToken},
		{"over 1024 bytes", func(r *proto.Request) { r.Space = strings.Repeat("s", 1000) }, proto.ErrSubjectTooLong},
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
	req := proto.Request{Space: "main", Rail: proto.RailOne, Endpoint: "ai.cotal.manager", Command: "spawn", Caller: alice, Nonce: nonce}
	subject, err := req.Subject()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := proto.ParseRequest(subject)
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
	got, err := proto.ParseReply(reply)
	wantReply := proto.Reply{Space: "main", Endpoint: "ai_cotal_manager", InstanceID: iid, Epoch: 7, Caller: alice, Nonce: nonce}
	if err != nil || got != wantReply {
		t.Fatalf("ParseReply = %+v, %v; want %+v", got, err, wantReply)
	}
	if !matches(proto.CallerReplyFilter("main", alice), reply) {
		t.Fatalf("caller filter %q misses %q", proto.CallerReplyFilter("main", alice), reply)
	}
	if !matches(proto.ResponderReplyFilter("main", "ai.cotal.manager", iid, 7), reply) {
		t.Fatalf("responder filter misses %q", reply)
	}
	if matches(proto.ResponderReplyFilter("main", "ai.cotal.manager", iid, 8), reply) {
		t.Fatalf("responder filter at another epoch matches %q", reply)
	}
	if matches(proto.CallerReplyFilter("main", local), reply) {
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
		if r, err := proto.ParseReply(s); !errors.Is(err, proto.ErrNotRail) {
			t.Errorf("ParseReply(%q) = %+v, %v; want ErrNotRail", s, r, err)
		}
	}
	if _, err := proto.ParseReply("cotal.main.ep.reply.manager." + iid + ".18446744073709551615." + tail); err != nil {
		t.Errorf("max epoch refused: %v", err)
	}
}

func TestNoResponders(t *testing.T) {
	s := proto.NoRespondersSubject("main", alice, nonce)
	want := "cotal.main.ep.reply._nr._nr._nr." + ownerA + ".alice." + uidA + "." + nonce
	if s != want {
		t.Fatalf("NoRespondersSubject = %q; want %q", s, want)
	}
	if !proto.IsNoResponders(s) || !matches(proto.CallerReplyFilter("main", alice), s) {
		t.Fatalf("sentinel %q not recognised or not on the caller's rail", s)
	}
	if proto.IsNoResponders("cotal.main.ep.reply.manager." + iid + ".1." + ownerA + ".alice." + uidA + "." + nonce) {
		t.Fatal("a real reply read as the sentinel")
	}
}

func TestServeSubjects(t *testing.T) {
	one, all, inst := proto.ServeSubjects("my space", "manager", iid, "spawn")
	if one != "cotal.my_space.ep.one.manager.spawn.>" || all != "cotal.my_space.ep.all.manager.spawn.>" ||
		inst != "cotal.my_space.ep.inst.manager."+iid+".spawn.>" {
		t.Fatalf("ServeSubjects = %q %q %q", one, all, inst)
	}
	if g := proto.QueueGroup("ai.cotal.manager"); g != "ai_cotal_manager" {
		t.Fatalf("QueueGroup = %q", g)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("ServeSubjects accepted a wildcard command")
		}
	}()
	proto.ServeSubjects("main", "manager", iid, ">")
}

func TestReservedNames(t *testing.T) {
	for _, n := range []string{"manager", "delivery", "auth"} {
		if !proto.ReservedEndpoint(n) {
			t.Errorf("%s not reserved", n)
		}
		if _, err := proto.EndpointToken(n); err != nil {
			t.Errorf("reserved %s must still build: %v", n, err)
		}
	}
	if proto.ReservedEndpoint("ai.cotal.manager") {
		t.Error("a reverse-DNS name is not reserved")
	}
	if !proto.ReservedCommand("describe") || !proto.ReservedCommand("cancel") || !proto.ValidCommand("describe") {
		t.Error("describe/cancel are reserved but valid commands")
	}
}

func TestNewNonce(t *testing.T) {
	a, b := proto.NewNonce(), proto.NewNonce()
	if len(a) != 32 || !proto.ValidNonce(a) || a == b {
		t.Fatalf("NewNonce = %q, %q", a, b)
	}
}

func TestPlanes(t *testing.T) {
	tests := []struct {
		name string
		got  func() (string, error)
		want string
	}{
		{"event", func() (string, error) { return proto.EventSubject("main", "manager", iid, 3, "spawned") }, "cotal.main.epe.manager." + iid + ".3.spawned"},
		{"fact", func() (string, error) { return proto.FactSubject("main", "manager", "cp", "tok") }, "cotal.main.epf.manager.cp.tok"},
		{"contract hex", func() (string, error) { return proto.ContractSubject("main", strings.Repeat("ab", 32)) }, "cotal.main.epc." + strings.Repeat("ab", 32)},
		{"contract digest", func() (string, error) { return proto.ContractSubject("main", proto.VoidSchemaArtifactDigest) }, "cotal.main.epc." + strings.TrimPrefix(proto.VoidSchemaArtifactDigest, "sha256:")},
		{"goal progress", func() (string, error) { return proto.GoalProgressSubject("main", "manager", iid, 3, alice, "g1") },
			"cotal.main.epe.manager." + iid + ".3.goal." + ownerA + ".alice." + uidA + ".g1.progress"},
		{"goal result", func() (string, error) { return proto.GoalResultSubject("main", "manager", alice, "g1") },
			"cotal.main.epf.manager.goal." + ownerA + ".alice." + uidA + ".g1.result"},
		{"goal progress filter", func() (string, error) { return proto.GoalProgressFilter("main", "manager", alice) },
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
		"no topic":        func() (string, error) { return proto.EventSubject("main", "manager", iid, 1) },
		"wildcard topic":  func() (string, error) { return proto.FactSubject("main", "manager", ">") },
		"dotted topic":    func() (string, error) { return proto.FactSubject("main", "manager", "a.b") },
		"short digest":    func() (string, error) { return proto.ContractSubject("main", "abc") },
		"upper hex":       func() (string, error) { return proto.ContractSubject("main", strings.Repeat("AB", 32)) },
		"bad goal id":     func() (string, error) { return proto.GoalResultSubject("main", "manager", alice, "g.1") },
		"bad goal caller": func() (string, error) { return proto.GoalResultSubject("main", "manager", proto.Caller{}, "g1") },
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
		r, err := proto.ParseRequest(subject)
		if err != nil {
			if !errors.Is(err, proto.ErrNotRail) {
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
