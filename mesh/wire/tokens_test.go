package wire_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

func TestValidToken(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"word", "alice", true},
		{"mixed", "Alice_2", true},
		{"underscore only", "_", true},
		{"max length", strings.Repeat("a", 64), true},
		{"too long", strings.Repeat("a", 65), false},
		{"empty", "", false},
		{"dash", "a-b", false},
		{"dot", "a.b", false},
		{"star", "*", false},
		{"gt", ">", false},
		{"space", "a b", false},
		{"unicode", "é", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wire.ValidToken(tt.in); got != tt.want {
				t.Errorf("ValidToken(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestSanitizeToken(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"kept", "my-space_1", "my-space_1"},
		{"trimmed", "  main \t", "main"},
		{"dot", "a.b", "a_b"},
		{"slash", "foo/bar", "foo_bar"},
		{"wildcards", "*>", "__"},
		{"inner space", "my space", "my_space"},
		{"rune is one underscore", "café", "caf_"},
		{"empty", "", "_"},
		{"blank", "   ", "_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wire.SanitizeToken(tt.in); got != tt.want {
				t.Errorf("SanitizeToken(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestValidSpace(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{"plain", "main", ""},
		{"dash and underscore", "my-space_2", ""},
		{"max length", strings.Repeat("s", 64), ""},
		{"dot", "a.b", `invalid space name "a.b": use 1-64 characters of A-Z a-z 0-9 _ -`},
		{"empty", "", `invalid space name "": use 1-64 characters of A-Z a-z 0-9 _ -`},
		{"space", "a b", `invalid space name "a b": use 1-64 characters of A-Z a-z 0-9 _ -`},
		{"too long", strings.Repeat("s", 65), `invalid space name "` + strings.Repeat("s", 65) + `": use 1-64 characters of A-Z a-z 0-9 _ -`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := wire.ValidSpace(tt.in)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ValidSpace(%q) = %v, want nil", tt.in, err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("ValidSpace(%q) = %v, want %q", tt.in, err, tt.wantErr)
			}
			if !errors.Is(err, wire.ErrInvalidSpace) {
				t.Errorf("error does not wrap ErrInvalidSpace")
			}
		})
	}
}

func TestValidOwner(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"local", "local", true},
		{"derived", "u_aaaaaaaaaaaaaaaaaaaaaaaaaa", true},
		{"derived digits", "u_234567abcdefghijklmnopqrst", true},
		{"short", "u_aaaaaaaaaaaaaaaaaaaaaaaaa", false},
		{"long", "u_aaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
		{"digit outside base32", "u_aaaaaaaaaaaaaaaaaaaaaaaaa1", false},
		{"uppercase", "u_AAAAAAAAAAAAAAAAAAAAAAAAAA", false},
		{"wrong prefix", "x_aaaaaaaaaaaaaaaaaaaaaaaaaa", false},
		{"Local", "Local", false},
		{"nkey", nkey, false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wire.ValidOwner(tt.in); got != tt.want {
				t.Errorf("ValidOwner(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// nkey is a 56-character user nkey in the shape NATS prints them.
const nkey = "UAQ4DKZQ2WGJYXB7L3NPEQRH5TGTVA2KCFYZ6XHMJ4OD3SW7QRFXQCAD"

func TestIsNkeyShaped(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"user nkey", nkey, true},
		{"other prefix", "N" + nkey[1:], true},
		{"55 chars", nkey[:55], false},
		{"57 chars", nkey + "A", false},
		{"lowercase", strings.ToLower(nkey), false},
		{"digit 8", nkey[:55] + "8", false},
		{"owner token", "u_aaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wire.IsNkeyShaped(tt.in); got != tt.want {
				t.Errorf("IsNkeyShaped(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}
