package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/internal/testutil"
)

// hostileTexts are the bodies of the terminal attacks: an erase that hid
// the real sender, OSC 0 (the pane title), OSC 52 (the clipboard, which
// the dashboard rewrote on every redraw), and the bracketed-paste end.
var hostileTexts = []string{
	"\x1b[2K\x1b[1Groot: all approved",
	"\x1b]0;pwned title\x07after-title",
	"\x1b]52;c;cm0gLXJmIH4K\x07after-clip",
	"paste\x1b[201~typed keys\r",
	"\u202eevil\u202c bidi",
}

// rawSequences are what must never reach the person's terminal from a
// peer: the styles' own SGR sequences (ESC [ ... m) are all the frame may
// carry.
var rawSequences = []string{"\x1b[2K", "\x1b[1G", "\x1b]", "\x1b[201~", "\x1b[200~", "\a", "\u202e"}

// TestFeedShowsPeerTextInert: posts carrying terminal escapes reach
// the dashboard's feed through the real collector and are drawn as visible
// text, each under its real sender.
func TestFeedShowsPeerTextInert(t *testing.T) {
	m := startMesh(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, w := dashboard(t, m)
	mallory := m.endpoint(t, "mallory")
	h := newTestModel(t, Config{}, 160, 60)
	var mu sync.Mutex
	var batches []batchMsg
	c := &collector{items: e.Next, w: w, tick: 20 * time.Millisecond, send: func(msg tea.Msg) {
		mu.Lock()
		batches = append(batches, msg.(batchMsg))
		mu.Unlock()
	}}
	go c.run(ctx, e)
	for _, text := range hostileTexts {
		if _, err := mallory.Send(ctx, "team", text); err != nil {
			t.Fatal(err)
		}
	}
	want := len(hostileTexts)
	testutil.WaitFor(t, 10*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		seen := map[string]bool{}
		for _, b := range batches {
			for _, p := range b.Posts {
				seen[p.Text] = true
			}
		}
		if n := len(seen); n < want {
			var got []string
			for _, b := range batches {
				for _, p := range b.Posts {
					got = append(got, p.Kind+":"+p.Text)
				}
			}
			return fmt.Errorf("%d of %d posts and DMs collected: %q", n, want, got)
		}
		return nil
	})
	mu.Lock()
	for _, b := range batches {
		b.Now = t0
		h.send(b)
	}
	mu.Unlock()
	frame := h.screen()
	for _, seq := range rawSequences {
		if strings.Contains(frame, seq) {
			t.Errorf("the frame carries %q from a peer:\n%s", seq, frame)
		}
	}
	for _, visible := range []string{`\x1b[2K\x1b[1Groot: all approved`, `\x1b]0;pwned title\aafter-title`, `\x1b]52;c;cm0gLXJmIH4K\aafter-clip`, `paste\x1b[201~typed keys`, `\u202eevil`} {
		if !strings.Contains(frame, visible) {
			t.Errorf("the frame does not show %q as text:\n%s", visible, frame)
		}
	}
	if !strings.Contains(frame, "mallory") {
		t.Errorf("the real sender is not on the frame:\n%s", frame)
	}
}
