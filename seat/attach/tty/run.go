package tty

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/attach"
)

// DefaultBackoff are the waits before each reconnect try; the last one
// repeats.
var DefaultBackoff = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second}

// Bounds of asking for a session and of joining it once its grant is in
// hand.
const (
	openTimeout = 30 * time.Second
	dialTimeout = 10 * time.Second
)

// ErrGone is what an Open returns, wrapped, when the seat is no longer
// there to attach to (stopped, exited, replaced by another lifecycle).
var ErrGone = errors.New("the seat is gone")

// Open asks the seat's manager for a fresh session, already served: its
// grant, and the connection to dial it on (the caller's, which the grant
// names as holder). Each call asks anew; a grant is good for one session.
type Open func(ctx context.Context) (*nats.Conn, json.RawMessage, error)

// Options say how a person's terminal attaches.
type Options struct {
	Name        string          // the seat, as the notes name it
	In          io.Reader       // the keyboard; a terminal is switched to raw mode
	Out         io.Writer       // the screen
	DetachKey   byte            // 0: DefaultDetachKey
	ReadOnly    bool            // watch only: keys and window size are not sent (the detach key still works)
	NoReconnect bool            // one session: a lost connection ends the attach
	Backoff     []time.Duration // nil: DefaultBackoff
	Rail        attach.RailOptions
}

// Ending is why Run returned.
type Ending int

// The endings of an attach.
const (
	Detached  Ending = iota // the person pressed the detach key, or the input ended
	Exited                  // the seat's process exited
	Gone                    // the seat was stopped, or is no longer there to reconnect to
	Lost                    // the connection was lost (NoReconnect)
	Restarted               // the serving manager restarted (NoReconnect)
	Expired                 // the session's grant expired (NoReconnect)
	Cancelled               // ctx ended: a signal, or the dashboard quitting
	Failed                  // the error says why: the first open, or a refusal
)

// Run attaches the terminal to the sessions open gives until the person
// detaches, the seat goes, ctx ends or a session cannot be had; it
// reconnects after a lost connection unless NoReconnect. The terminal is
// restored before it returns, and before a panic leaves it. The error is
// set with Failed only.
func Run(ctx context.Context, o Options, open Open) (end Ending, err error) {
	if o.DetachKey == 0 {
		o.DetachKey = DefaultDetachKey
	}
	if len(o.Backoff) == 0 {
		o.Backoff = DefaultBackoff
	}
	t, err := openTerminal(o.In, o.Out)
	if err != nil {
		return Failed, err
	}
	defer t.restore()
	defer t.guard()
	kb := startKeyboard(t, o.DetachKey)
	defer kb.stop()
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	a := &attacher{o: o, t: t, events: kb.events, open: open, winch: winch, resize: make(chan struct{}, 1)}
	return a.run(ctx)
}

// attacher is one Run's state; its fields are Run's goroutine's but for
// those the sender reads (o, t, resize) and events, handed to the sender
// while a session is up and taken back when it ends.
type attacher struct {
	o      Options
	t      *terminal
	events <-chan keyEvent // nil once the input ended and it is not a detach
	open   Open
	winch  chan os.Signal
	resize chan struct{} // capacity one: the window changed
}

func (a *attacher) entryNote() string {
	if a.o.ReadOnly {
		return "[cotal: watching " + a.o.Name + " read-only: your keys are not sent; " + KeyName(a.o.DetachKey) + " detaches]"
	}
	return "[cotal: attached to " + a.o.Name + "; " + KeyName(a.o.DetachKey) + " detaches]"
}

// openOnce asks for one session, bounded.
func (a *attacher) openOnce(ctx context.Context) (*nats.Conn, json.RawMessage, error) {
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	return a.open(octx)
}

func (a *attacher) run(ctx context.Context) (Ending, error) {
	nc, raw, err := a.openOnce(ctx)
	if err != nil {
		return Failed, err
	}
	c, err := a.dial(ctx, nc, raw, a.entryNote(), false)
	if err != nil {
		return Failed, err
	}
	for {
		end, note := a.session(ctx, c)
		if note == "" {
			return end, nil
		}
		if a.o.NoReconnect {
			return end, nil
		}
		a.t.note(note)
		var err error
		if c, end, err = a.reconnect(ctx); c == nil {
			return end, err
		}
	}
}

// dial joins the session a grant names at the window's size; note is
// shown just before the session's first screen, after the modes the seat
// had set are reset when fresh is set (the screen sets those it has now).
func (a *attacher) dial(ctx context.Context, nc *nats.Conn, raw json.RawMessage, note string, fresh bool) (*attach.Client, error) {
	g, err := attach.ParseGrant(raw)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	cols, rows, _ := a.t.size()
	if a.o.ReadOnly {
		cols, rows = 0, 0 // a watcher leaves the seat at the size of those who type
	}
	var once sync.Once
	return attach.Dial(dctx, nc, g, attach.ClientOptions{
		Cols: cols, Rows: rows, Rail: a.o.Rail,
		OnData: func(p []byte) {
			defer a.t.guard()
			once.Do(func() {
				if fresh {
					a.t.reset()
				}
				a.t.note(note)
			})
			a.t.output(p)
		},
	})
}

// session runs one session until it ends. A note is returned when the
// attach should reconnect (with the ending it has without reconnecting).
func (a *attacher) session(ctx context.Context, c *attach.Client) (Ending, string) {
	stop := make(chan struct{})
	detached := make(chan struct{})
	sent := make(chan (<-chan keyEvent))
	sctx, cancel := context.WithCancel(ctx)
	go a.send(sctx, c, stop, detached, sent)
	finish := func() {
		cancel()
		close(stop)
		a.events = <-sent
	}
	for {
		select {
		case <-ctx.Done():
			c.Close()
			finish()
			return Cancelled, ""
		case <-detached:
			c.Close()
			finish()
			return Detached, ""
		case <-a.winch:
			if a.o.ReadOnly {
				break
			}
			select {
			case a.resize <- struct{}{}:
			default:
			}
		case <-c.Done():
			finish()
			return ended(c)
		}
	}
}

// ended reads why a session ended: final, or a note to reconnect with.
func ended(c *attach.Client) (Ending, string) {
	why, err := c.End()
	switch why {
	case attach.ReasonProcessExit:
		return Exited, ""
	case attach.ReasonTargetDespawn:
		return Gone, ""
	case attach.ReasonManagerRestart:
		return Restarted, "[cotal: manager restarted; re-attaching]"
	case attach.ReasonExpired:
		return Expired, "[cotal: the session's grant expired; reconnecting]"
	}
	_ = err // a broken rail, the other side's close, or a closed connection: all lost
	return Lost, "[cotal: connection lost, reconnecting]"
}

// send types the person's keys and tells the seat the window's size, in
// order, until stop; the detach key is reported on detached. It hands the
// event channel back on sent (nil once the input has ended).
func (a *attacher) send(ctx context.Context, c *attach.Client, stop <-chan struct{}, detached chan<- struct{}, sent chan<- (<-chan keyEvent)) {
	events := a.events
	defer func() { sent <- events }()
	defer a.t.guard()
	for {
		select {
		case <-stop:
			return
		case <-a.resize:
			if cols, rows, ok := a.t.size(); ok {
				_ = c.Resize(ctx, cols, rows) // a session ending is seen by Run
			}
		case ev, ok := <-events:
			switch {
			case !ok && a.o.ReadOnly:
				events = nil // nothing to send anyway: keep watching
			case !ok || ev.detach:
				events = nil
				close(detached)
				<-stop
				return
			case !a.o.ReadOnly:
				_ = c.Keys(ctx, ev.keys)
			}
		}
	}
}

// reconnect asks for a fresh session after the waits of the backoff,
// until one is had, the seat is gone, a refusal says to stop, or the
// person detaches. Keys typed meanwhile into a terminal are dropped; from
// a pipe they wait.
func (a *attacher) reconnect(ctx context.Context) (*attach.Client, Ending, error) {
	for try := 0; ; try++ {
		timer := time.NewTimer(a.o.Backoff[min(try, len(a.o.Backoff)-1)])
		end, waited := a.wait(ctx, timer.C)
		timer.Stop()
		if !waited {
			return nil, end, nil
		}
		nc, raw, err := a.openOnce(ctx)
		if err != nil {
			if end, final := classify(err); final {
				return nil, end, errIf(end, err)
			}
			continue
		}
		if c, err := a.dial(ctx, nc, raw, "[cotal: reconnected]", true); err == nil {
			return c, 0, nil
		}
	}
}

// wait waits for the next try; false with an ending when the person
// detached or ctx ended first.
func (a *attacher) wait(ctx context.Context, next <-chan time.Time) (Ending, bool) {
	events := a.events
	if !a.t.inTTY {
		events = nil // a pipe keeps its bytes for the next session
	}
	for {
		select {
		case <-ctx.Done():
			return Cancelled, false
		case <-next:
			return 0, true
		case <-a.winch: // the next dial reads the size
		case ev, ok := <-events:
			switch {
			case !ok && a.o.ReadOnly:
				events, a.events = nil, nil
			case !ok || ev.detach:
				return Detached, false
			}
		}
	}
}

// classify says whether an Open error ends the attach: the seat gone, or
// a refusal no retry will change. Anything else (the mesh or the manager
// away, a timeout) is tried again.
func classify(err error) (Ending, bool) {
	if errors.Is(err, ErrGone) {
		return Gone, true
	}
	if e := proto.AsError(err); e != nil && (e.Code == proto.CodePermissionDenied || e.Code == proto.CodeUnauthenticated) {
		return Failed, true
	}
	return 0, false
}

func errIf(end Ending, err error) error {
	if end == Failed {
		return err
	}
	return nil
}
