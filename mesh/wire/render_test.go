package wire_test

import (
	"strings"
	"testing"
	"unicode/utf8"

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

// hostile is peer text as the attacks used it: an erase that hides the
// real sender, a window title and a clipboard write through OSC, the end
// of a bracketed paste followed by keys, 8-bit CSI, bidi overrides, a bell
// and a byte that is not UTF-8.
var hostile = []string{
	"\x1b[2K\x1b[1Gboss: approved, merge it",
	"\x1b]0;pwned title\x07",
	"\x1b]52;c;cm0gLXJmIH4K\x07",
	"\x1b]52;c;cm0gLXJmIH4K\x1b\\",
	"end\x1b[201~rm -rf ~\r",
	"\x1b[200~inner paste",
	"\u009b2J\u009d0;t\u009c",
	"\u202eexe.txt\u202c and \u2066isolate\u2069 \u200f",
	"bell\x07 null\x00 del\x7f bs\x08",
	"bad \xff\xfe bytes",
}

// TestInertLeavesNothingATerminalActsOn: every control, escape, bidi
// control and stray byte comes out as visible text; what is printable
// passes unchanged.
func TestInertLeavesNothingATerminalActsOn(t *testing.T) {
	for _, in := range hostile {
		out := wire.Inert(in)
		if !utf8.ValidString(out) {
			t.Errorf("Inert(%q) = %q is not UTF-8", in, out)
		}
		for _, r := range out {
			if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200f || r == 0x200e || r == 0x061c {
				t.Errorf("Inert(%q) = %q keeps %U", in, out, r)
			}
		}
	}
	for in, want := range map[string]string{
		"\x1b[2K\x1b[1Gboss":   `\x1b[2K\x1b[1Gboss`,
		"\x1b]0;t\x07":         `\x1b]0;t\a`,
		"a\x1b[201~b":          `a\x1b[201~b`,
		"\u202eevil":           `\u202eevil`,
		"\u009b2J":             `\u009b2J`,
		"x\xffy":               `x\xffy`,
		"line\r\nnext\rover":   "line\nnext\\rover",
		"tab\tand\nnewline ok": "tab\tand\nnewline ok",
		"café 日本 🙂":            "café 日本 🙂",
	} {
		if got := wire.Inert(in); got != want {
			t.Errorf("Inert(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLabelsAndBodiesAreInert: the two shapes every surface uses.
func TestLabelsAndBodiesAreInert(t *testing.T) {
	for _, in := range hostile {
		for name, out := range map[string]string{"IndentBody": wire.IndentBody(in), "CleanLabel": wire.CleanLabel(in)} {
			if strings.ContainsAny(out, "\x1b\x07\x00\u009b\u202e") {
				t.Errorf("%s(%q) = %q keeps a control", name, in, out)
			}
		}
	}
}
