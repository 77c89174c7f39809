package tui

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/seat/sandbox"
)

var update = flag.Bool("update", false, "rewrite the golden screens in testdata/")

func TestMain(m *testing.M) {
	// A test that hosts a manager spawns seats through this binary.
	sandbox.Main()
	time.Local = time.UTC // feed timestamps print in local time
	os.Exit(m.Run())
}

// t0 is the clock of every model test.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// plainStyles renders without colour, as under NO_COLOR.
func plainStyles() Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return NewStyles(r)
}

// fakeSender records sends and answers with a receipt or err.
type fakeSender struct {
	mu   sync.Mutex
	sent []outgoing
	err  error
}

func (f *fakeSender) record(sig byte, to, text string) (mesh.Receipt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, outgoing{Sigil: sig, To: to, Text: text})
	if f.err != nil {
		return mesh.Receipt{}, f.err
	}
	return mesh.Receipt{ID: fmt.Sprintf("id%d", len(f.sent)), Seq: uint64(len(f.sent)), Channel: to}, nil
}

func (f *fakeSender) Send(_ context.Context, ch, text string, _ ...mesh.SendOption) (mesh.Receipt, error) {
	return f.record('#', ch, text)
}

func (f *fakeSender) DM(_ context.Context, to, text string, _ ...mesh.SendOption) (mesh.Receipt, error) {
	return f.record('@', to, text)
}

func (f *fakeSender) Ask(_ context.Context, role, text string, _ ...mesh.SendOption) (mesh.Receipt, error) {
	return f.record('!', role, text)
}

// harness is a model at a fixed size with a fake sender, a bell counter
// and the notifications it raised.
type harness struct {
	t       *testing.T
	m       *Model
	s       *fakeSender
	bells   int
	notices []string // "title|body"
}

func newTestModel(t *testing.T, cfg Config, w, h int) *harness {
	t.Helper()
	if cfg.Space == "" {
		cfg.Space, cfg.Hosting, cfg.Mode, cfg.Sync, cfg.URL, cfg.PID = "default", true, "auth", "always", "nats://127.0.0.1:4222", 4242
	}
	h2 := &harness{t: t, s: &fakeSender{}}
	h2.m = newModel(cfg, plainStyles(), h2.s, alerts{
		bell:   func() { h2.bells++ },
		notify: func(title, body string) { h2.notices = append(h2.notices, title+"|"+body) },
	})
	h2.m.sh.now = t0
	h2.m.sh.self, h2.m.sh.selfID = "root", "local.root"
	h2.send(tea.WindowSizeMsg{Width: w, Height: h})
	return h2
}

// send runs one message through Update and returns the command.
func (h *harness) send(msg tea.Msg) tea.Cmd {
	h.t.Helper()
	_, cmd := h.m.Update(msg)
	return cmd
}

// keys types each string as key presses (special names in <>).
func (h *harness) keys(seq ...string) tea.Cmd {
	h.t.Helper()
	var last tea.Cmd
	for _, s := range seq {
		switch s {
		case "<enter>":
			last = h.send(tea.KeyMsg{Type: tea.KeyEnter})
		case "<esc>":
			last = h.send(tea.KeyMsg{Type: tea.KeyEscape})
		case "<tab>":
			last = h.send(tea.KeyMsg{Type: tea.KeyTab})
		default:
			for _, r := range s {
				last = h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
			}
		}
	}
	return last
}

// batch sends a collector batch at t0+at.
func (h *harness) batch(at time.Duration, b batchMsg) {
	h.t.Helper()
	b.Now = t0.Add(at)
	if b.View.State == "" {
		b.View = presence.View{State: presence.Current, Fresh: true, LastDelivery: b.Now}
	}
	h.send(b)
}

func (h *harness) screen() string { return h.m.View() }

// peerOpt adjusts a test peer.
type peerOpt func(*presence.Peer)

func withRole(r string) peerOpt { return func(p *presence.Peer) { p.Role, p.Record.Card.Role = r, r } }
func withActivity(a string) peerOpt {
	return func(p *presence.Peer) { p.Record.Activity = a }
}
func asEndpoint() peerOpt {
	return func(p *presence.Peer) { p.Record.Card.Kind = presence.KindEndpoint }
}
func withHarness(h string) peerOpt {
	return func(p *presence.Peer) { p.Record.Card.Meta = map[string]string{"harness": h} }
}
func offline(reason string) peerOpt {
	return func(p *presence.Peer) { p.Offline, p.Status, p.OfflineReason = true, presence.Offline, reason }
}

// peer is a roster row whose status began `since` before t0.
func peer(name string, st presence.Status, since time.Duration, opts ...peerOpt) presence.Peer {
	p := presence.Peer{
		ID: "local." + name, Name: name, Status: st,
		Record:    presence.Record{Card: presence.Card{ID: "local." + name, Name: name, Kind: presence.KindAgent}, Status: st},
		LastHeard: t0.Add(-time.Second), HeartbeatAt: t0.Add(-time.Second), StatusSince: t0.Add(-since), Known: true,
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

// post is a channel post at t0+at.
func post(id, ch, from, text string, at time.Duration) Post {
	return Post{ID: id, Kind: "channel", Channel: ch, From: from, FromID: "local." + from, Text: text, At: t0.Add(at)}
}

// golden compares got with testdata/<name>.golden, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	got = strings.TrimRight(stripTrailing(got), "\n") + "\n"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("screen %s differs from %s (rerun with -update if intended)\n--- got ---\n%s\n--- want ---\n%s", name, path, got, want)
	}
}

// stripTrailing drops the padding at line ends, which golden files need not keep.
func stripTrailing(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// lipglossDiscard is a renderer that draws colour into nothing, so the
// benchmark pays for styling as a colour terminal would.
func lipglossDiscard() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	return r
}
