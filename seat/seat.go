package seat

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/keeper"
	"github.com/cotal-go/cotal/seat/pty"
	"github.com/cotal-go/cotal/transcript"
)

// Seat states.
const (
	StateStarting  = "starting"  // launched, not ready yet
	StateReady     = "ready"     // drew output and kept running; on the mesh
	StateUncertain = "uncertain" // neither ready nor exited within the bound
	StateExited    = "exited"
)

// Seat is one agent process in a pty, with the connector that holds its
// mesh identity. mu guards the mutable fields.
type Seat struct {
	name    string
	id      wire.Principal
	uid     string
	role    string
	persona string
	harness string
	creds   string
	goalID  string
	spawner proto.Caller // who asked for it: in owner mode, the only agent that may act on it
	created time.Time
	bound   time.Duration // how long it has to come up before it reads uncertain
	// launchDir holds the seat's creds and launch material; set before
	// its process starts, fixed after.
	launchDir string

	mu      sync.Mutex
	sandbox string // what the launcher achieved, as ps shows it
	nested  string // why the harness's own sandbox cannot run in the seat, "" when it can
	pty     *pty.Seat
	conn    *mesh.Endpoint // nil until ready, nil again after exit

	floor   floor      // what a person attached to it typed
	term    *floorTerm // its terminal as attach sessions see it; nil until it starts
	heldWhy string     // why injection waits for its person, "" for none

	suspendedAt time.Time // when a row first found the process stopped by a signal
	stopped     bool      // a stop asked its process to end
	injects     bool      // an injector puts its arrivals in front of its agent

	h       harness            // how its program is driven; fixed at spawn
	agent   agentState         // what its harness last reported of itself
	flights map[string]*flight // what its hooks handed over, by token, until settled
	repeats map[string]bool    // ids handed over without proof the model had them
	wake    chan struct{}      // buffered 1: its harness's state changed, look again

	// hello is closed when the seat's MCP server says its client
	// connected: a harness seat's readiness.
	hello     chan struct{}
	helloOnce sync.Once
	state     string
	readyAt   time.Time
	exitAt    time.Time

	// Custody (custody.go). keepDir is the seat's keeper directory, ""
	// when this process holds it (custodyMode legacy); set before its
	// process starts, fixed after.
	keepDir      string
	cwd          string
	custodyMode  string
	reattachedAt time.Time        // when this manager took it back from its keeper
	detached     *keeper.Detached // what its keeper kept of the output written while no manager held it
	tree         *seatTree        // its git worktree; nil when it runs in the project's checkout
	budget       int64            // its persona's budget in tokens; fixed at spawn
	usage        *seatUsage       // follows its harness's transcript; nil until a hook names one
	used         transcript.Usage // what the transcript said last
	usedErr      string           // why the last read failed, "" when it did not
	lostAt       time.Time        // when it was lost (StateLost)
	lostWhy      string           // why
	endedHow     string           // how a seat this manager never held a process of ended (its ps process column)
	preserved    bool             // stopped for a resume (down --preserve-state): its lifecycle goes on
	returning    bool             // read its channels before (taken back, resumed): its joins backfill nothing
	dmFrom       uint64           // resumed in an open mesh: the DM sequence its inbox is made again from, if gone
	argvPre      []string         // put before its harness's arguments (a resume's subcommand); fixed before it starts
	resumedAt    time.Time        // restarted from a preserved inventory
	resumedFrom  string           // the harness session it resumed, "" when it had none
}

// ended reports whether the seat is over: exited, or lost. It needs mu.
func (s *Seat) ended() bool { return s.state == StateExited || s.state == StateLost }

// isPreserved reports whether the seat was stopped for a resume.
func (s *Seat) isPreserved() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.preserved
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// row reports the seat.
func (s *Seat) row() client.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := client.Row{
		Name: s.name, ID: s.id.ID(), LifecycleUID: s.uid, Role: s.role, Persona: s.persona, Harness: s.harness,
		State: s.state, StartedMs: ms(s.created), GoalID: s.goalID, Mesh: string(presence.Offline),
		Sandbox: s.sandbox, Nested: s.nested, Custody: s.custodyMode, ReattachedMs: ms(s.reattachedAt), LostMs: ms(s.lostAt), Lost: s.lostWhy,
		ResumedMs: ms(s.resumedAt), ResumedFrom: s.resumedFrom,
	}
	if d := s.detached; d != nil {
		r.DetachedKept, r.DetachedDropped, r.DetachedSinceMs = d.Kept, d.Dropped, d.SinceMs
	}
	if s.endedHow != "" && s.pty == nil {
		r.Process, r.ExitedMs = s.endedHow, ms(s.exitAt)
		r.EndedAway = s.state == StateExited
	}
	if s.pty != nil {
		r.PID, r.LastOutputMs = s.pty.PID(), ms(s.pty.LastOutput())
		r.Process = "running"
		if code, sig, ok := s.pty.ExitStatus(); ok {
			r.Process = fmt.Sprintf("exited %d", code)
			if sig != "" {
				r.Process = "killed " + sig
			}
			if s.lostWhy != "" {
				r.Process = "lost"
			}
			r.ExitedMs = ms(s.exitAt)
		} else if suspended(r.PID) {
			if s.suspendedAt.IsZero() {
				s.suspendedAt = time.Now()
			}
			r.SuspendedMs = ms(s.suspendedAt)
		} else {
			s.suspendedAt = time.Time{}
		}
	}
	r.Stopped, r.Worktree, r.Usage = s.stopped, s.treeRow(), s.usageRow()
	r.Held, r.Injects = s.heldWhy, s.injects
	r.Agent, r.Session = s.agentRow(), s.agent.session
	if s.conn != nil {
		var oldest time.Time
		r.Waiting, r.PullOnly, oldest = s.conn.Queue()
		r.OldestWaitingMs = ms(oldest)
		if rec, ok := s.conn.PresenceRecord(); ok {
			r.Mesh, r.MeshSinceMs, r.Activity = string(rec.Status), rec.StatusSince, rec.Activity
		}
	} else if !s.exitAt.IsZero() {
		r.MeshSinceMs = ms(s.exitAt)
	}
	return r
}

// running reports whether the seat's process runs.
func (s *Seat) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pty != nil && s.pty.Running()
}

// live reports whether the seat holds its name: its process runs, or it
// is still being launched (a seat is in the manager's map before its pty
// starts).
func (s *Seat) live() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pty == nil {
		return !s.ended()
	}
	return s.pty.Running()
}

// stop ends the process; the exit watcher takes the seat offline.
func (s *Seat) stop(ctx context.Context, graceful bool) error {
	s.mu.Lock()
	p := s.pty
	if p != nil && p.Running() {
		s.stopped = true
	}
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	if err := p.Stop(ctx, graceful); err != nil {
		return err
	}
	s.waitOffline(ctx)
	return nil
}

// waitOffline waits until the exit watcher has closed the connector.
func (s *Seat) waitOffline(ctx context.Context) {
	for {
		s.mu.Lock()
		done := s.ended() && s.conn == nil
		s.mu.Unlock()
		if done || ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// release frees the pty.
func (s *Seat) release() {
	s.mu.Lock()
	p := s.pty
	s.mu.Unlock()
	if p != nil {
		p.Close()
	}
}

// screen is the seat's current screen as text.
func (s *Seat) screen() (string, time.Time, bool) {
	s.mu.Lock()
	p := s.pty
	s.mu.Unlock()
	if p == nil {
		return "", time.Time{}, false
	}
	return p.Screen(), p.LastOutput(), true
}

// waitScreen waits for the seat's screen to show text (see
// pty.Seat.WaitScreen); ok is false when the seat has no screen.
func (s *Seat) waitScreen(ctx context.Context, text string) (screen string, last time.Time, matched, ok bool) {
	s.mu.Lock()
	p := s.pty
	s.mu.Unlock()
	if p == nil {
		return "", time.Time{}, false, false
	}
	screen, matched = p.WaitScreen(ctx, func(t string) bool { return strings.Contains(t, text) })
	return screen, p.LastOutput(), matched, true
}

// tail is the last lines of the seat's screen, for a failure message.
func tail(p *pty.Seat, n int) string {
	return strings.Join(p.Tail(n), "\n")
}

// connector is the seat's connector, nil before it joins and after exit.
func (s *Seat) connector() *mesh.Endpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}
