package attach_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/seat/attach"
	"github.com/cotal-go/cotal/seat/pty"
)

var _ attach.Terminal = (*pty.Seat)(nil)

// screen is the holder's terminal: an emulator fed what the session
// delivers.
type screen struct {
	mu    sync.Mutex
	emu   *vt.Emulator
	cols  int
	rows  int
	bytes int
	drops []int64
	hold  chan struct{} // while non-nil, writes wait for it to close
}

func newScreen(t testing.TB, cols, rows int) *screen {
	s := &screen{cols: cols, rows: rows}
	s.reset()
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		closeEmu(s.emu)
	})
	return s
}

// reset starts over on a blank terminal.
func (s *screen) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.emu != nil {
		closeEmu(s.emu)
	}
	emu := vt.NewEmulator(s.cols, s.rows)
	go func() { // the emulator's query answers; nobody reads them here
		buf := make([]byte, 256)
		for {
			if _, err := emu.Read(buf); err != nil {
				return
			}
		}
	}()
	s.emu = emu
}

// closeEmu ends the emulator's answer reader. Emulator.Close races a
// pending Read, so close the pipe's writer instead, as seat/pty does.
func closeEmu(emu *vt.Emulator) {
	if c, ok := emu.InputPipe().(io.Closer); ok {
		_ = c.Close()
	}
}

func (s *screen) write(p []byte) {
	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	if hold != nil {
		<-hold
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bytes += len(p)
	_, _ = s.emu.Write(p)
}

func (s *screen) dropped(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops = append(s.drops, n)
}

func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var lines []string
	for y := range s.rows {
		var b strings.Builder
		for x := range s.cols {
			if c := s.emu.CellAt(x, y); c != nil {
				b.WriteString(c.Content)
			}
		}
		lines = append(lines, strings.TrimRight(b.String(), " "))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

func (s *screen) waitFor(t testing.TB, want string) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, func() error {
		if txt := s.text(); !strings.Contains(txt, want) {
			return fmt.Errorf("holder's screen has no %q:\n%s", want, txt)
		}
		return nil
	})
}

// mesh is an open broker with a serving connection and a registry.
type mesh struct {
	t      testing.TB
	url    string
	server *nats.Conn
	reg    *attach.Registry
}

func startMesh(t testing.TB, opts attach.RegistryOptions) *mesh {
	t.Helper()
	b, nc := testmesh.Start(t, space, true)
	if opts.Space == "" {
		opts.Space = space
	}
	if opts.Endpoint == "" {
		opts.Endpoint = "manager"
	}
	if opts.Serving.InstanceID == "" {
		opts.Serving = attach.Serving{InstanceID: "inst1234", Epoch: 1}
	}
	reg, err := attach.NewRegistry(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close(attach.ReasonManagerRestart) })
	return &mesh{t: t, url: b.URL(), server: nc, reg: reg}
}

// conn is a holder's own TCP connection.
func (m *mesh) conn() *nats.Conn {
	m.t.Helper()
	nc, err := nats.Connect(m.url)
	if err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(nc.Close)
	return nc
}

// startSeat runs a command in a real pty, closed with the test.
func startSeat(t testing.TB, cols, rows int, args ...string) *pty.Seat {
	t.Helper()
	s, err := pty.Start(context.Background(), pty.Config{Path: args[0], Args: args[1:], Cols: cols, Rows: rows, Env: []string{"PATH=/usr/bin:/bin", "PS1=$ "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// attached is one holder attached to a seat.
type attached struct {
	grant  attach.Grant
	server *attach.Server
	client *attach.Client
	screen *screen
}

// attachTo offers, redeems and serves a session on seat for holder and
// dials it from nc; tweak may change the client's options.
func (m *mesh) attachTo(seat attach.Terminal, name string, holder attach.Holder, nc *nats.Conn, cols, rows int, tweak func(*attach.ClientOptions, *screen)) *attached {
	m.t.Helper()
	g, err := m.reg.Offer(attach.Target{Name: name}, holder)
	if err != nil {
		m.t.Fatal(err)
	}
	raw, err := g.Marshal()
	if err != nil {
		m.t.Fatal(err)
	}
	g, _, err = m.reg.Redeem(raw, holder)
	if err != nil {
		m.t.Fatal(err)
	}
	srv, err := m.reg.Serve(testmesh.Ctx(m.t), m.server, g, seat)
	if err != nil {
		m.t.Fatal(err)
	}
	scr := newScreen(m.t, cols, rows)
	opts := attach.ClientOptions{Cols: cols, Rows: rows, OnData: scr.write, OnDrop: scr.dropped}
	if tweak != nil {
		tweak(&opts, scr)
	}
	c, err := attach.Dial(testmesh.Ctx(m.t), nc, g, opts)
	if err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(c.Close)
	return &attached{grant: g, server: srv, client: c, screen: scr}
}

func (a *attached) waitEnd(t testing.TB, want attach.Reason) {
	t.Helper()
	select {
	case <-a.client.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("session did not end; want %s", want)
	}
	if r, err := a.client.End(); r != want {
		t.Fatalf("session ended %s (%v); want %s", r, err, want)
	}
	select {
	case <-a.server.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("server side did not end")
	}
}

func typeKeys(t testing.TB, c *attach.Client, s string) {
	t.Helper()
	if err := c.Keys(testmesh.Ctx(t), []byte(s)); err != nil {
		t.Fatal(err)
	}
}
