package line

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// logHold is how long a joined terminal holds a log line before printing
// it: a mesh that is stopping first loses its services, then its broker,
// and the lines about the services say nothing once the mesh is gone.
const logHold = 2 * time.Second

// logPoll is how often a held line looks whether it may print.
const logPoll = 250 * time.Millisecond

// HeldLog prints an endpoint's log lines after logHold, while the
// connection is up; once the mesh is lost, it drops them: the person is
// told in words that it stopped, not shown the chain of errors it left.
type HeldLog struct {
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

// NewHeldLog prints held lines on out.
func NewHeldLog(out io.Writer) *HeldLog {
	l := &HeldLog{out: out, lines: make(chan heldLine, 64)}
	go l.run()
	return l
}

// Logf is the endpoint's Logf.
func (l *HeldLog) Logf(format string, args ...any) {
	select {
	case l.lines <- heldLine{fmt.Sprintf("cotal: "+format, args...), time.Now()}:
	default: // a flood while the mesh goes away: the rest says no more
	}
}

// Watch tells the log whether the endpoint is connected.
func (l *HeldLog) Watch(connected func() bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.connected = connected
}

// Drop discards every line from now on.
func (l *HeldLog) Drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropped = true
}

// state says whether a line may be printed now, or must be dropped.
func (l *HeldLog) state() (printable, dropped bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.connected == nil || l.connected(), l.dropped
}

func (l *HeldLog) run() {
	for line := range l.lines {
		time.Sleep(time.Until(line.at.Add(logHold))) // a hold, not a wait for a condition
		for {
			printable, dropped := l.state()
			if dropped {
				break
			}
			if printable {
				fmt.Fprintln(l.out, line.text)
				break
			}
			time.Sleep(logPoll) // the connection's state is polled, as nats.go gives no callback here
		}
	}
}
