package tty_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	cpty "github.com/creack/pty"
	"github.com/nats-io/nats.go"
	"golang.org/x/sys/unix"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/attach"
	"github.com/cotal-go/cotal/seat/attach/tty"
	"github.com/cotal-go/cotal/seat/pty"
)

const space = "ttytest"

// person is a person's terminal: a real pty whose tty side Run drives;
// the test types into its master and reads the screen from it.
type person struct {
	t         *testing.T
	ptmx, tty *os.File
	mu        sync.Mutex
	out       bytes.Buffer
}

func newPerson(t *testing.T, cols, rows int) *person {
	t.Helper()
	ptmx, tt, err := cpty.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := cpty.Setsize(ptmx, &cpty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		t.Fatal(err)
	}
	p := &person{t: t, ptmx: ptmx, tty: tt}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = tt.Close()
		_ = ptmx.Close()
		<-done
		if t.Failed() {
			t.Logf("the person's terminal showed:\n%q", p.shown())
		}
	})
	return p
}

func (p *person) shown() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func (p *person) typeKeys(s string) {
	p.t.Helper()
	if _, err := p.ptmx.Write([]byte(s)); err != nil {
		p.t.Fatal(err)
	}
}

// waitShown waits until the terminal has shown want count times.
func (p *person) waitShown(want string, count int) {
	p.t.Helper()
	testutil.WaitFor(p.t, 10*time.Second, func() error {
		if n := strings.Count(p.shown(), want); n < count {
			return fmt.Errorf("%q shown %d times, want %d", want, n, count)
		}
		return nil
	})
}

// termios is the terminal's line discipline now.
func (p *person) termios() unix.Termios {
	p.t.Helper()
	tio, err := unix.IoctlGetTermios(int(p.tty.Fd()), unix.TCGETS)
	if err != nil {
		p.t.Fatal(err)
	}
	return *tio
}

// server is the serving side: a broker, one seat, and the attach
// registry of the current manager epoch. open is a tty.Open over it.
type server struct {
	t      *testing.T
	url    string
	nc     *nats.Conn // the serving connection
	seat   *pty.Seat
	holder attach.Holder

	mu    sync.Mutex
	reg   *attach.Registry
	epoch uint64
	conn  *nats.Conn // the holder's
	opens int
	fail  error // what open answers instead of a grant
}

func newServer(t *testing.T, args ...string) *server {
	t.Helper()
	b, nc := testmesh.Start(t, space, true)
	if len(args) == 0 {
		args = []string{"sh"}
	}
	seat, err := pty.Start(context.Background(), pty.Config{Path: args[0], Args: args[1:], Cols: 80, Rows: 24, Env: []string{"PATH=/usr/bin:/bin", "PS1=$ "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(seat.Close)
	s := &server{t: t, url: b.URL(), nc: nc, seat: seat, holder: attach.Holder{ID: "local.alice", LifecycleUID: wire.NewLifecycleUID()}}
	s.restart()
	t.Cleanup(func() {
		s.mu.Lock()
		reg, conn := s.reg, s.conn
		s.mu.Unlock()
		reg.Close(attach.ReasonManagerRestart)
		if conn != nil {
			conn.Close()
		}
	})
	return s
}

// restart ends the sessions as a manager going away does and serves the
// next epoch, with a new key.
func (s *server) restart() {
	s.t.Helper()
	s.mu.Lock()
	old := s.reg
	s.epoch++
	reg, err := attach.NewRegistry(attach.RegistryOptions{Space: space, Endpoint: "manager", Serving: attach.Serving{InstanceID: "inst1234", Epoch: s.epoch}})
	if err != nil {
		s.t.Fatal(err)
	}
	s.reg = reg
	s.mu.Unlock()
	if old != nil {
		old.Close(attach.ReasonManagerRestart)
	}
}

func (s *server) failWith(err error) {
	s.mu.Lock()
	s.fail = err
	s.mu.Unlock()
}

func (s *server) openCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opens
}

// dropConn closes the holder's connection, as a broker going away does.
func (s *server) dropConn() {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	c.Close()
}

// open offers, redeems and serves a session as the manager's attach
// command does, and hands out the holder's connection.
func (s *server) open(ctx context.Context) (*nats.Conn, json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opens++
	if s.fail != nil {
		return nil, nil, s.fail
	}
	if s.conn == nil || s.conn.IsClosed() {
		nc, err := nats.Connect(s.url)
		if err != nil {
			return nil, nil, err
		}
		s.conn = nc
	}
	g, err := s.reg.Offer(attach.Target{Name: "shell"}, s.holder)
	if err != nil {
		return nil, nil, err
	}
	raw, err := g.Marshal()
	if err != nil {
		return nil, nil, err
	}
	if _, _, err := s.reg.Redeem(raw, s.holder); err != nil {
		return nil, nil, err
	}
	if _, err := s.reg.Serve(ctx, s.nc, g, s.seat); err != nil {
		return nil, nil, err
	}
	return s.conn, raw, nil
}

// sessions is how many sessions the current epoch serves live.
func (s *server) sessions() int {
	s.mu.Lock()
	reg := s.reg
	s.mu.Unlock()
	n := 0
	for _, st := range reg.Sessions("") {
		if st.Live {
			n++
		}
	}
	return n
}

// waitScreen waits until the seat's own screen shows want.
func (s *server) waitScreen(want string) {
	s.t.Helper()
	testutil.WaitFor(s.t, 10*time.Second, func() error {
		if !strings.Contains(s.seat.Screen(), want) {
			return fmt.Errorf("the seat's screen lacks %q:\n%s", want, s.seat.Screen())
		}
		return nil
	})
}

// result is what one Run returned.
type result struct {
	end tty.Ending
	err error
}

// attachRun runs tty.Run for p on s until the test ends it.
func attachRun(t *testing.T, ctx context.Context, p *person, o tty.Options, open tty.Open) <-chan result {
	t.Helper()
	o.Name, o.In, o.Out = "shell", p.tty, p.tty
	if o.Backoff == nil {
		o.Backoff = []time.Duration{20 * time.Millisecond}
	}
	ch := make(chan result, 1)
	go func() {
		end, err := tty.Run(ctx, o, open)
		t.Logf("Run: %v %v", end, err)
		ch <- result{end, err}
	}()
	return ch
}

func waitResult(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(15 * time.Second):
		t.Fatal("the attach did not end")
	}
	return result{}
}

var errDown = errors.New("the mesh is down")
