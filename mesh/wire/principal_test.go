package wire_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

const (
	ownerA = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa"
	ownerB = "u_bbbbbbbbbbbbbbbbbbbbbbbbbb"
)

var (
	alice = wire.Principal{Owner: ownerA, Actor: "alice"}
	bob   = wire.Principal{Owner: ownerB, Actor: "bob"}
)

func TestPrincipalForms(t *testing.T) {
	if got, want := alice.ID(), ownerA+".alice"; got != want {
		t.Errorf("ID() = %q, want %q", got, want)
	}
	if got, want := alice.Dash(), ownerA+"-alice"; got != want {
		t.Errorf("Dash() = %q, want %q", got, want)
	}
	if got := alice.String(); got != alice.ID() {
		t.Errorf("String() = %q, want the ID %q", got, alice.ID())
	}
}

func TestPrincipalValid(t *testing.T) {
	tests := []struct {
		name    string
		p       wire.Principal
		wantErr string
	}{
		{"derived owner", alice, ""},
		{"local owner", wire.Principal{Owner: "local", Actor: "conn_1"}, ""},
		{"actor max length", wire.Principal{Owner: "local", Actor: strings.Repeat("a", 64)}, ""},
		{"actor dash", wire.Principal{Owner: "local", Actor: "a-b"}, `actor "a-b" must be one token of A-Z a-z 0-9 _ (no . * > -)`},
		{"actor dot", wire.Principal{Owner: "local", Actor: "a.b"}, `actor "a.b" must be one token of A-Z a-z 0-9 _ (no . * > -)`},
		{"actor star", wire.Principal{Owner: "local", Actor: "*"}, `actor "*" must be one token of A-Z a-z 0-9 _ (no . * > -)`},
		{"actor gt", wire.Principal{Owner: "local", Actor: ">"}, `actor ">" must be one token of A-Z a-z 0-9 _ (no . * > -)`},
		{"actor empty", wire.Principal{Owner: "local"}, `actor "" must be one token of A-Z a-z 0-9 _ (no . * > -)`},
		{"actor too long", wire.Principal{Owner: "local", Actor: strings.Repeat("a", 65)}, `actor "` + strings.Repeat("a", 65) + `" is longer than 64 characters`},
		{"owner dash", wire.Principal{Owner: "u-a", Actor: "x"}, `owner "u-a" must be one token of A-Z a-z 0-9 _ (no . * > -)`},
		{"owner dot", wire.Principal{Owner: "lo.cal", Actor: "x"}, `owner "lo.cal" must be one token of A-Z a-z 0-9 _ (no . * > -)`},
		{"owner star", wire.Principal{Owner: "*", Actor: "x"}, `owner "*" must be one token of A-Z a-z 0-9 _ (no . * > -)`},
		{"owner not derived", wire.Principal{Owner: "bob", Actor: "x"}, `owner "bob" must be local or u_ followed by 26 characters of a-z 2-7`},
		{"owner nkey", wire.Principal{Owner: nkey, Actor: "x"}, `owner "` + nkey + `" must be local or u_ followed by 26 characters of a-z 2-7`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Valid()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Valid() = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("Valid() = %v, want %q", err, tt.wantErr)
			}
			if !errors.Is(err, wire.ErrInvalidPrincipal) {
				t.Errorf("error does not wrap ErrInvalidPrincipal")
			}
		})
	}
}

func TestParsePrincipal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    wire.Principal
		wantErr bool
	}{
		{"derived", ownerA + ".alice", alice, false},
		{"local", "local.conn_1", wire.Principal{Owner: "local", Actor: "conn_1"}, false},
		{"one token", "local", wire.Principal{}, true},
		{"three tokens", "local.a.b", wire.Principal{}, true},
		{"empty actor", "local.", wire.Principal{}, true},
		{"empty owner", ".alice", wire.Principal{}, true},
		{"dash actor", "local.a-b", wire.Principal{}, true},
		{"wildcard actor", "local.*", wire.Principal{}, true},
		{"dash form", ownerA + "-alice", wire.Principal{}, true},
		{"empty", "", wire.Principal{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := wire.ParsePrincipal(tt.in)
			if tt.wantErr {
				if err == nil || !errors.Is(err, wire.ErrInvalidPrincipal) {
					t.Fatalf("ParsePrincipal(%q) = %v, %v; want ErrInvalidPrincipal", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParsePrincipal(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestReplyInboxIsTheLifecycles(t *testing.T) {
	p := wire.Principal{Owner: "local", Actor: "alice"}
	if got, want := wire.ReplyInbox(p, "u1"), "_INBOX_local-alice-u1"; got != want {
		t.Fatalf("ReplyInbox = %q, want %q", got, want)
	}
	if wire.ReplyInbox(p, "u1") == wire.ReplyInbox(p, "u2") {
		t.Fatal("two lifecycles of a principal share a reply inbox")
	}
}
