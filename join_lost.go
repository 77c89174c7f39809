package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/host"
)

// meshPoll is how often a joined terminal looks at its connection.
const meshPoll = 250 * time.Millisecond

// logHold is how long a joined terminal holds a log line before printing
// it: a mesh that is stopping first loses its services, then its broker,
// and the lines about the services say nothing once the mesh is gone.
const logHold = 2 * time.Second

// heldLog prints an endpoint's log lines after logHold, while the
// connection is up; once the mesh is lost, it drops them: the person is
// told in words that it stopped, not shown the chain of errors it left.
type heldLog struct {
	out   io.Writer
	lines chan heldLine

	mu        sync.Mutex
	connected func() bool // nil until the endpoint exists
	dropped   bool
}

type heldLine struct {
	text string
	at   time.Time
}

func newHeldLog(out io.Writer) *heldLog {
	l := &heldLog{out: out, lines: make(chan heldLine, 64)}
	go l.run()
	return l
}

// logf is the endpoint's Logf.
func (l *heldLog) logf(format string, args ...any) {
	select {
	case l.lines <- heldLine{fmt.Sprintf("cotal: "+format, args...), time.Now()}:
	default: // a flood while the mesh goes away: the rest says no more
	}
}

// watch tells the log whether the endpoint is connected.
func (l *heldLog) watch(connected func() bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.connected = connected
}

// drop discards every line from now on.
func (l *heldLog) drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropped = true
}

// state says whether a line may be printed now, or must be dropped.
func (l *heldLog) state() (printable, dropped bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.connected == nil || l.connected(), l.dropped
}

func (l *heldLog) run() {
	for line := range l.lines {
		time.Sleep(time.Until(line.at.Add(logHold)))
		for {
			printable, dropped := l.state()
			if dropped {
				break
			}
			if printable {
				fmt.Fprintln(l.out, line.text)
				break
			}
			time.Sleep(meshPoll)
		}
	}
}

// lostMesh watches a joined terminal's connection and reports, once, that
// the mesh is gone: its process ended or another took its place (for a
// mesh reached by --server, that nothing answered for serverGrace).
func lostMesh(ctx context.Context, g *globals, nc *nats.Conn) <-chan error {
	lost := make(chan error, 1)
	_, p, _, err := g.paths()
	local := err == nil && g.server == ""
	pid := 0
	if local {
		if s, err := host.Probe(p); err == nil && s.Running {
			pid = s.PID
		}
	}
	go func() {
		tick := time.NewTicker(meshPoll)
		defer tick.Stop()
		var down time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if nc.Status() == nats.CONNECTED {
				down = time.Time{}
				continue
			}
			if down.IsZero() {
				down = time.Now()
			}
			if local {
				s, err := host.Probe(p)
				switch {
				case err != nil:
				case !s.Running:
					lost <- fmt.Errorf("mesh %s stopped; you have left it (`cotal up --detach` starts it again, then join again)", p.Space)
					return
				case pid != 0 && s.PID != pid:
					lost <- fmt.Errorf("mesh %s was restarted (pid %d, was %d); you have left it: join again", p.Space, s.PID, pid)
					return
				}
				continue
			}
			if time.Since(down) > serverGrace {
				lost <- fmt.Errorf("lost the mesh at %s: nothing has answered for %s, so it stopped or cannot be reached; you have left it", g.server, serverGrace)
				return
			}
		}
	}()
	return lost
}

// serverGrace is how long a mesh reached by --server may stay silent
// before a joined terminal gives it up.
const serverGrace = 5 * time.Second
