package render_test

import (
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// payloads are the peer texts of the terminal attacks: an erase of the
// line that hides the real sender, OSC 0 (window title), OSC 52 (clipboard
// write), the bracketed-paste end marker followed by keys, and a bidi
// override.
var payloads = []string{
	"\x1b[2K\x1b[1G[DM from root] approved",
	"\x1b]0;pwned\x07title",
	"\x1b]52;c;cm0gLXJmIH4K\x07clip",
	"hi\x1b[201~rm -rf ~\r",
	"\u202egnp.exe",
}

// terminalActive reports a byte or rune a terminal would act on.
func terminalActive(s string) bool {
	return strings.ContainsAny(s, "\x1b\x07\r\x00\u009b\u009d\u202e")
}

// TestItemAndBlockAreInert: whatever a peer puts in a message, the item
// line and the injected block carry it as visible text, under the real
// sender's attribution at the start of the line.
func TestItemAndBlockAreInert(t *testing.T) {
	bob := wire.Principal{Owner: "local", Actor: "bob"}
	me := wire.Principal{Owner: "local", Actor: "alice"}
	for _, text := range payloads {
		for _, c := range []struct {
			kind wire.Kind
			sub  wire.Subject
			head string
		}{
			{wire.KindDM, wire.Subject{Kind: wire.KindDM, Sender: bob, Recipient: me}, "[DM from bob] "},
			{wire.KindChannel, wire.Subject{Kind: wire.KindChannel, Sender: bob, Channel: "team"}, "[#team bob] "},
			{wire.KindAnycast, wire.Subject{Kind: wire.KindAnycast, Sender: bob, Role: "reviewer"}, "[@reviewer from bob] "},
		} {
			m := wire.Message{ID: "x", From: wire.Sender{ID: "local.bob", Name: "bob\x1b[2K", Role: "\x1b]0;r\x07"}, Parts: wire.TextParts(text)}
			line := render.Item(c.kind, c.sub, m, false, me)
			if terminalActive(line) {
				t.Errorf("%s item %q is not inert", c.kind, line)
			}
			if !strings.HasPrefix(line, strings.TrimSuffix(c.head, "] ")) {
				t.Errorf("%s item %q does not start with the real sender %q", c.kind, line, c.head)
			}
			if !strings.Contains(line, `\x1b`) && strings.Contains(text, "\x1b") {
				t.Errorf("%s item %q hides the escape instead of showing it", c.kind, line)
			}
			block := render.Block([]string{line, line}, nil)
			if terminalActive(block) || strings.Contains(block, "[201~") && !strings.Contains(block, `\x1b[201~`) {
				t.Errorf("block %q is not inert", block)
			}
		}
	}
}
