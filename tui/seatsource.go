package tui

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/cotal-go/cotal/seat/attach/tty"
	"github.com/cotal-go/cotal/seat/client"
)

// SeatSource is the managers' view of their seats. The collector calls it;
// the UI goroutine never does.
type SeatSource interface {
	// Seats takes a census of every manager's seats now.
	Seats(ctx context.Context) (Census, error)
	// Changes signals, coalesced, that Seats would answer differently.
	Changes() <-chan struct{}
	// Screen is the seat's current screen as text.
	Screen(ctx context.Context, s Seat) (Screen, error)
}

// SeatControl acts on seats. The model calls it only inside tea.Cmds.
type SeatControl interface {
	// Personas names the personas a spawn may use, or says where it looked.
	Personas(ctx context.Context) ([]client.PersonaChoice, error)
	// Spawn asks a manager to start a seat; it returns once accepted.
	Spawn(ctx context.Context, persona string) (SpawnTicket, error)
	// AwaitSpawn follows an accepted spawn to its one outcome.
	AwaitSpawn(ctx context.Context, t SpawnTicket) (SpawnOutcome, error)
	// Stop ends the seat's process and returns how it ended.
	Stop(ctx context.Context, s Seat) (process string, err error)
	// Input types text and Enter into the seat; it returns the bytes its
	// terminal accepted.
	Input(ctx context.Context, s Seat, text string) (int, error)
	// Answer answers what the seat waits on (decision allow or deny)
	// through its harness's hook; it returns what the seat had asked.
	Answer(ctx context.Context, s Seat, decision string) (string, error)
	// Sessions opens attach sessions on the seat, a fresh grant each
	// time, for the attach the dashboard runs full screen.
	Sessions(s Seat) tty.Open
}

// Census is one ps over every manager.
type Census struct {
	Seats    []Seat
	Managers int      // managers that answered; 0 with no seats is "no manager yet"
	Missing  []string // managers that did not answer, or answered with an error: the list is incomplete
	// Declared are the seats the space's manifest declares (what `up -f`
	// applied), by name; nil when none does.
	Declared []string
}

// Seat is one pty a manager runs: the process state and the mesh state side
// by side, because they can disagree. LastOutput is the observation the
// roster's stalled overlay needs.
type Seat struct {
	Name       string
	UID        string // the lifecycle the seat runs as now
	PeerID     string // presence id (owner.actor) of the seat's identity
	Manager    string // instance id of the manager running it
	Persona    string
	Harness    string // claude, codex, opencode, command
	State      string // starting, ready, uncertain, exited
	Process    string // running, exited N, killed SIG; "" before it started
	PID        int
	Started    time.Time
	Exited     time.Time
	LastOutput time.Time
	Mesh       string // the connector's presence status, or offline
	MeshSince  time.Time
	Activity   string
	Sandbox    string   // namespace, landlock, "unsandboxed: <reason>"; "" not known yet
	Attached   []string // who is attached to its terminal now (owner.actor), one per session
	// Usage is its cost and activity, from its harness's transcript; nil
	// when none is read. LastAnswer is when its model last answered.
	Usage      *client.UsageRow
	LastAnswer time.Time
	Worktree   *client.WorktreeRow // its git worktree; nil for none
	Stopped    bool                // a stop ended it: its exit is no crash
	Suspended  time.Time           // when its running process was first seen stopped by a signal; zero when it is not
	// Reattached is when its manager took it back from its keeper (the
	// mesh before had died or let go); Lost is when it was lost (its
	// keeper went away, taking its terminal), and LostWhy why.
	Reattached time.Time
	Lost       time.Time
	LostWhy    string
	// Resumed is when it was restarted from a preserved inventory (`down
	// --preserve-state`, then up), and ResumedFrom from which harness
	// session ("" when it started afresh under the same identity).
	Resumed     time.Time
	ResumedFrom string

	// Held says why messages wait for the seat's person ("person
	// typing"); Waiting counts the messages its connector holds, the
	// oldest since OldestWaiting.
	Held          string
	Waiting       int
	OldestWaiting time.Time
	PullOnly      int  // of Waiting, those left for the agent's own inbox read
	Injects       bool // messages are typed into its terminal

	// Agent is what its harness reports of itself (working, waiting,
	// idle; "" when it reports nothing); when waiting on a person, Asks is
	// what it asks, since AsksSince, and Answerable says the answer keys
	// reach it (otherwise the person attaches).
	Agent      string
	Asks       string
	AsksSince  time.Time
	Answerable bool
}

// asking is what a running seat's harness waits on its person for.
func (s *Seat) asking() (string, bool) {
	if s.Agent != "waiting" || !s.Running() {
		return "", false
	}
	if s.Asks == "" {
		return "waiting for input", true
	}
	return s.Asks, true
}

// Running reports whether the seat's process runs.
func (s *Seat) Running() bool { return s.Process == "running" }

// key tells seats apart: a name is reused once its seat has exited, and
// two managers may each have a seat of one name; a lifecycle is one spawn.
func (s *Seat) key() string {
	if s.UID == "" {
		return s.Manager + "/" + s.Name
	}
	return s.Manager + "/" + s.UID
}

// unsandboxed is why a running seat could read the space's keys and creds,
// if it could.
func (s *Seat) unsandboxed() (string, bool) {
	why, ok := strings.CutPrefix(s.Sandbox, "unsandboxed")
	if !ok || !s.Running() {
		return "", false
	}
	return strings.TrimPrefix(why, ": "), true
}

// disagreement says, in a few words, how process and mesh disagree ("" when
// they do not): a running process off the mesh once it should be on, or a
// gone process the mesh still shows.
func (s *Seat) disagreement() string {
	offline := s.Mesh == "" || s.Mesh == "offline"
	switch {
	case s.Running() && offline && s.State != "starting":
		return "off the mesh"
	case !s.Running() && s.Process != "" && !offline:
		return "process gone"
	}
	return ""
}

// Screen is a seat's screen as the manager last drew it.
type Screen struct {
	Text    string
	Running bool
}

// SpawnTicket is an accepted spawn: which seat it will be and the goal that
// reports how it went.
type SpawnTicket struct {
	Persona  string
	Name     string
	Manager  string
	GoalID   string
	Deadline time.Duration // the readiness bound the manager set
}

// Spawn outcomes.
const (
	SpawnSucceeded = "succeeded"
	SpawnFailed    = "failed"
	SpawnUncertain = "uncertain"
)

// SpawnOutcome is how a spawn ended.
type SpawnOutcome struct {
	State   string // one of the Spawn* outcomes
	Message string // why it failed, in the manager's words
}

// seatFocus is the seat whose screen the collector fetches. The UI
// goroutine sets it; the collector's screen poller reads it.
type seatFocus struct {
	mu   sync.Mutex
	seat Seat
	set  bool
}

func (f *seatFocus) store(s Seat, ok bool) {
	f.mu.Lock()
	f.seat, f.set = s, ok
	f.mu.Unlock()
}

func (f *seatFocus) load() (Seat, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seat, f.set
}
