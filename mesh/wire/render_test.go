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
