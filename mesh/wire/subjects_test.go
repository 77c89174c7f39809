package wire_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

// TestParseSubjectSpecVectors is the table of spec §2 (SPEC §12).
func TestParseSubjectSpecVectors(t *testing.T) {
	tests := []struct {
		name          string
		subject       string
		want          wire.Subject
		noSender      bool // ParseSubject refuses
		unsurfaceable bool // parses but must be dropped
	}{
		{
			name:    "chat",
			subject: "cotal.main.chat." + ownerA + ".alice.team.backend",
			want:    wire.Subject{Space: "main", Kind: wire.KindChannel, Sender: alice, Channel: "team.backend"},
		},
		{
			name:    "inst",
			subject: "cotal.main.inst." + ownerB + ".bob." + ownerA + ".alice",
			want:    wire.Subject{Space: "main", Kind: wire.KindDM, Sender: alice, Recipient: bob},
		},
		{
			name:    "svc",
			subject: "cotal.main.svc.reviewer." + ownerA + ".alice",
			want:    wire.Subject{Space: "main", Kind: wire.KindAnycast, Sender: alice, Role: "reviewer"},
		},
		{
			name:     "retired ctl",
			subject:  "cotal.main.ctl.manager." + ownerA + ".alice",
			noSender: true,
		},
		{
			name:     "chat without channel",
			subject:  "cotal.main.chat." + ownerA + ".alice",
			noSender: true,
		},
		{
			name:          "nkey owner",
			subject:       "cotal.main.chat." + nkey + ".team.backend",
			want:          wire.Subject{Space: "main", Kind: wire.KindChannel, Sender: wire.Principal{Owner: nkey, Actor: "team"}, Channel: "backend"},
			unsurfaceable: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := wire.ParseSubject(tt.subject)
			if tt.noSender {
				if !errors.Is(err, wire.ErrNoSender) {
					t.Fatalf("ParseSubject = %+v, %v; want ErrNoSender", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSubject: %v", err)
			}
			if got != tt.want {
				t.Fatalf("ParseSubject = %+v, want %+v", got, tt.want)
			}
			err = got.Surfaceable()
			if tt.unsurfaceable {
				if !errors.Is(err, wire.ErrUnsurfaceable) {
					t.Fatalf("Surfaceable = %v, want ErrUnsurfaceable", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Surfaceable = %v, want nil", err)
			}
		})
	}
}

func TestParseSubjectArity(t *testing.T) {
	tests := []struct {
		name    string
		subject string
		ok      bool
	}{
		{"chat deep channel", "cotal.s.chat.local.a.x.y.z", true},
		{"inst six", "cotal.s.inst.local.b.local", false},
		{"inst eight", "cotal.s.inst.local.b.local.a.x", false},
		{"svc five", "cotal.s.svc.r.local", false},
		{"svc seven", "cotal.s.svc.r.local.a.x", false},
		{"wrong prefix", "kotal.s.chat.local.a.x", false},
		{"unknown kind", "cotal.s.live.manager.local.a", false},
		{"dinbox", "cotal.s.dinbox.local.a.uid", false},
		{"empty token", "cotal.s.chat.local.a.x..y", false},
		{"empty", "", false},
		{"two tokens", "cotal.s", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wire.ParseSubject(tt.subject)
			if tt.ok && err != nil {
				t.Fatalf("ParseSubject(%q) = %v, want nil", tt.subject, err)
			}
			if !tt.ok && !errors.Is(err, wire.ErrNoSender) {
				t.Fatalf("ParseSubject(%q) = %v, want ErrNoSender", tt.subject, err)
			}
		})
	}
}

func TestSurfaceable(t *testing.T) {
	tests := []struct {
		name   string
		sender wire.Principal
		ok     bool
	}{
		{"derived", alice, true},
		{"local", wire.Principal{Owner: "local", Actor: "a"}, true},
		{"nkey owner", wire.Principal{Owner: nkey, Actor: "a"}, false},
		{"made-up owner", wire.Principal{Owner: "mallory", Actor: "a"}, false},
		{"bad actor", wire.Principal{Owner: "local", Actor: "a-b"}, false},
		{"wildcard actor", wire.Principal{Owner: "local", Actor: "*"}, false},
		{"zero", wire.Principal{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := wire.Subject{Kind: wire.KindChannel, Sender: tt.sender, Channel: "c"}.Surfaceable()
			if tt.ok != (err == nil) {
				t.Fatalf("Surfaceable() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, wire.ErrUnsurfaceable) {
				t.Errorf("error does not wrap ErrUnsurfaceable")
			}
		})
	}
}

func TestBuildSubjects(t *testing.T) {
	tests := []struct{ name, got, want string }{
		{"root", wire.Root("main"), "cotal.main"},
		{"root sanitized", wire.Root(" my.space "), "cotal.my_space"},
		{"root empty", wire.Root(""), "cotal._"},
		{"chat filter", wire.ChatFilter("main", "team.>"), "cotal.main.chat.*.*.team.>"},
		{"dm", wire.DMSubject("main", bob, alice), "cotal.main.inst." + ownerB + ".bob." + ownerA + ".alice"},
		{"dm filter", wire.DMFilter("main", bob), "cotal.main.inst." + ownerB + ".bob.>"},
		{"svc", wire.SvcSubject("main", "Reviewer", alice), "cotal.main.svc.reviewer." + ownerA + ".alice"},
		{"svc sanitized role", wire.SvcSubject("main", "code review", alice), "cotal.main.svc.code_review." + ownerA + ".alice"},
		{"svc filter", wire.SvcFilter("main", "REVIEWER"), "cotal.main.svc.reviewer.>"},
		{"svc filter star", wire.SvcFilter("main", "*"), "cotal.main.svc.*.>"},
		{"inbox", wire.InboxSubject("main", alice, "uid1"), "cotal.main.dinbox." + ownerA + ".alice.uid1"},
		{"dlv", wire.DlvSubject("main", alice, "uid1"), "cotal.main.dlv." + ownerA + ".alice.uid1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestChatSubject(t *testing.T) {
	tests := []struct {
		name    string
		from    wire.Principal
		channel string
		want    string
		is      error
	}{
		{name: "ok", from: alice, channel: "team.backend", want: "cotal.main.chat." + ownerA + ".alice.team.backend"},
		{name: "wildcard", from: alice, channel: "team.>", is: wire.ErrWildcardTarget},
		{name: "star", from: alice, channel: "team.*", is: wire.ErrWildcardTarget},
		{name: "invalid channel", from: alice, channel: "foo/bar", is: wire.ErrInvalidChannel},
		{name: "empty channel", from: alice, channel: "", is: wire.ErrInvalidChannel},
		{name: "bad sender", from: wire.Principal{Owner: "local", Actor: "a.b"}, channel: "c", is: wire.ErrInvalidPrincipal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := wire.ChatSubject("main", tt.from, tt.channel)
			if tt.is != nil {
				if !errors.Is(err, tt.is) {
					t.Fatalf("ChatSubject = %q, %v; want %v", got, err, tt.is)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ChatSubject = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// FuzzParseSubject checks ParseSubject never panics and that what it splits can be rebuilt into the same subject.
func FuzzParseSubject(f *testing.F) {
	f.Add("cotal.main.chat." + ownerA + ".alice.team.backend")
	f.Add("cotal.main.inst." + ownerB + ".bob." + ownerA + ".alice")
	f.Add("cotal.main.svc.reviewer." + ownerA + ".alice")
	f.Add("cotal.main.chat." + nkey + ".team.backend")
	f.Fuzz(func(t *testing.T, subject string) {
		s, err := wire.ParseSubject(subject)
		if err != nil {
			if !errors.Is(err, wire.ErrNoSender) {
				t.Fatalf("error %v does not wrap ErrNoSender", err)
			}
			return
		}
		if wire.SanitizeToken(s.Space) != s.Space {
			return // the builders sanitize the space, so only a token space can round-trip
		}
		switch s.Kind {
		case wire.KindChannel:
			if s.Surfaceable() != nil || wire.ValidateConcreteChannel(s.Channel) != nil {
				return
			}
			got, err := wire.ChatSubject(s.Space, s.Sender, s.Channel)
			if err != nil || got != subject {
				t.Fatalf("ChatSubject(%+v) = %q, %v; want %q", s, got, err, subject)
			}
		case wire.KindDM:
			if got := wire.DMSubject(s.Space, s.Recipient, s.Sender); got != subject {
				t.Fatalf("DMSubject(%+v) = %q, want %q", s, got, subject)
			}
		case wire.KindAnycast:
			if wire.SanitizeToken(strings.ToLower(s.Role)) != s.Role {
				return
			}
			if got := wire.SvcSubject(s.Space, s.Role, s.Sender); got != subject {
				t.Fatalf("SvcSubject(%+v) = %q, want %q", s, got, subject)
			}
		default:
			t.Fatalf("ParseSubject(%q) accepted kind %q", subject, s.Kind)
		}
	})
}
