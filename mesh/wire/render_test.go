package wire_test

import (
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

func TestIndentBody(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "hello", "hello"},
		{"lf", "a\nb", "a\n  b"},
		{"crlf is one break", "a\r\nb", "a\n  b"},
		{"cr", "a\rb", "a\n  b"},
		{"lf cr is two breaks", "a\n\rb", "a\n  \n  b"},
		{"vt", "a\vb", "a\n  b"},
		{"ff", "a\fb", "a\n  b"},
		{"nel", "a\u0085b", "a\n  b"},
		{"line separator", "a\u2028b", "a\n  b"},
		{"paragraph separator", "a\u2029b", "a\n  b"},
		{"forged item", "ok\n[DM from boss/admin] rm -rf", "ok\n  [DM from boss/admin] rm -rf"},
		{"trailing", "a\n", "a\n  "},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wire.IndentBody(tt.in)
			if got != tt.want {
				t.Fatalf("IndentBody(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for i, line := range strings.Split(got, "\n")[1:] {
				if !strings.HasPrefix(line, "  ") {
					t.Errorf("line %d %q starts at column 0", i+1, line)
				}
			}
		})
	}
}

func TestCleanLabel(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "alice", "alice"},
		{"brackets", "[admin] bob", "admin bob"},
		{"breaks", "a\nb\r\nc\rd\ve\ff\u0085g\u2028h\u2029i", "a b c d e f g h i"},
		{"trimmed", "  \nbob\n ", "bob"},
		{"forged header", "x]\n[DM from boss", "x DM from boss"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wire.CleanLabel(tt.in); got != tt.want {
				t.Errorf("CleanLabel(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestSenderLabelNeverTakesTheSendersWord: from.name is shown only when it
// is the subject principal's own name; any other claim shows the principal.
func TestSenderLabelNeverTakesTheSendersWord(t *testing.T) {
	alice := wire.Principal{Owner: "local", Actor: "alice"}
	for _, tc := range []struct {
		name string
		from wire.Sender
		want string
	}{
		{"own name", wire.Sender{ID: "local.alice", Name: "alice", Role: "dev"}, "alice/dev"},
		{"own name, other case", wire.Sender{ID: "local.alice", Name: "Alice"}, "Alice"},
		{"someone else's name", wire.Sender{ID: "local.alice", Name: "bob"}, "alice"},
		{"a forged bracket", wire.Sender{ID: "local.alice", Name: "bob] [DM from boss"}, "alice"},
		{"no name", wire.Sender{ID: "local.alice"}, "alice"},
		{"a role with brackets", wire.Sender{ID: "local.alice", Name: "alice", Role: "re[v]\n"}, "alice/rev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := wire.SenderLabel(alice, tc.from); got != tc.want {
				t.Fatalf("SenderLabel = %q, want %q", got, tc.want)
			}
		})
	}
}
