package seat

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/attach"
	"github.com/cotal-go/cotal/seat/pty"
)

// Defaults of a manager.
const (
	DefaultReadiness = 30 * time.Second       // spawn to ready, else uncertain
	DefaultSettle    = 500 * time.Millisecond // first output, then still running this long
	DefaultMaxSeats  = 50
)

// MintRequest asks for a seat's mesh identity.
type MintRequest struct {
	Name           string
	Role           string
	Subscribe      []string
	AllowSubscribe wire.ACL // nil reads nothing
	AllowPublish   wire.ACL // nil posts nothing
	Capabilities   []string
	HostedBy       string // the manager instance whose connector holds the seat's inbox
}

// Minted is a seat identity: its principal, lifecycle uid and a 0600 creds
// file the seat (and only it) reads.
type Minted struct {
	Principal wire.Principal
	UID       string
	Creds     string
}

// Minter issues seat identities. The mesh process implements it with the
// space's signing authority; the manager never holds a signing key.
type Minter interface {
	MintSeat(ctx context.Context, req MintRequest) (Minted, error)
	// Retire revokes an exited seat's credential: its creds file can no
	// longer connect, and connections still holding it are closed.
	Retire(ctx context.Context, p wire.Principal, uid string) error
	// Taken reports whether an unrevoked credential of name exists, so the
	// name must not be handed out again.
	Taken(name string) bool
	// Reserved says why no seat may ever take name (the operator's, the
	// mesh's own services', one held under another profile); nil when
	// none of that holds.
	Reserved(name string) error
}

// Options configure a manager instance.
type Options struct {
	Space string
	URL   string // the mesh URL seats connect to
	// TLS is how seats verify the server at URL when it takes TLS only
	// (a mesh reachable from other machines): their COTAL_TLS_PIN or
	// COTAL_TLS_CA.
	TLS          config.TLSTrust
	Conn         *nats.Conn // the manager's own (operator) connection
	Identity     ep.Identity
	InstanceFile string // the persisted instance id
	ProjectDir   string // where .cotal/agents/ personas live
	Minter       Minter
	Open         bool // an open mesh: no identity records, no security claims
	MaxSessions  int  // attach sessions open at once (--max-sessions); 0: 64
	// FloorQuiet is how long after a person's last keystroke in an attach
	// session nothing is injected into the seat; 0: 10 s.
	FloorQuiet time.Duration
	// HookGrace is how long a harness's hook may take to say it wrote
	// what it handed over before the items go back; 0: 15 s.
	HookGrace time.Duration
	// Readiness is how long a spawned seat has to come up before its
	// goal reads uncertain, unless its spawn or persona says; 0: its
	// harness's (readinessBound).
	Readiness time.Duration
	Settle    time.Duration
	MaxSeats  int
	Logf      func(format string, args ...any)

	// Declared, when set, resolves a persona the space's manifest
	// declares before the project's agent files are looked at.
	Declared Declared

	// Launcher is the seat launcher (the cotal binary; see seat/sandbox).
	// Empty starts seats directly, unsandboxed.
	Launcher string
	// RunDir holds the seats' launch directories (LaunchDir); empty puts
	// each in a temp directory.
	RunDir string
	// Protect are directories no seat may see into (the store's keys,
	// creds and messages); the seats' launch directories are added.
	Protect []string
	// SandboxSkip names launcher modes not to use (sandbox.Namespace,
	// sandbox.Landlock), to force a fallback.
	SandboxSkip []string
	// NoCustody keeps seats in this process instead of in keepers of
	// their own (custody.go): they end with it.
	NoCustody bool
	// Resume is a ready inventory of this instance's seats (`down
	// --preserve-state`): Start restarts them under their lifecycles.
	Resume *Inventory
	// KeepRing bounds the output a keeper keeps while no manager holds
	// its seat; 0: keeper.DefaultRing.
	KeepRing int
}

// Manager runs seats and serves the manager endpoint. mu guards seats and
// reserved; a seat's own fields (its pty among them) are guarded by the
// seat's mu. Lock order: m.mu, then a seat's mu; never the reverse.
type Manager struct {
	opts   Options
	server *ep.Server
	iid    string

	mu       sync.Mutex
	seats    map[string]*Seat   // by name, live and exited
	reserved map[string]bool    // names being spawned
	records  jetstream.KeyValue // the identity records, opened on first use
	ids      identities         // a copy of them, kept by a watch (identities.go)
	sessions *attach.Registry   // attach sessions of this incarnation; nil until Start
	// closing is set by Close (closeStop) or Release (closeRelease) before
	// they sweep the seats: a seat whose process starts after the sweep
	// is stopped (or let go of) by its own launch instead (adopt).
	closing string
	// fenced is set by Preserve: every spawn is refused from then on.
	fenced bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New prepares a manager: it loads (or creates) its instance id, refusing
// a malformed id file by name.
func New(opts Options) (*Manager, error) {
	if opts.Settle == 0 {
		opts.Settle = DefaultSettle
	}
	if opts.MaxSeats == 0 {
		opts.MaxSeats = DefaultMaxSeats
	}
	if opts.FloorQuiet == 0 {
		opts.FloorQuiet = floorQuiet
	}
	if opts.HookGrace == 0 {
		opts.HookGrace = hookGrace
	}
	iid, err := ep.LoadOrCreateInstanceID(opts.InstanceFile)
	if err != nil {
		return nil, fmt.Errorf("manager instance id %s: %w", opts.InstanceFile, err)
	}
	m := &Manager{opts: opts, iid: iid, seats: map[string]*Seat{}, reserved: map[string]bool{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	srv, err := ep.NewServer(opts.Conn, ep.ServerOptions{
		Space: opts.Space, Endpoint: wire.ManagerEndpoint, InstanceID: iid, Identity: opts.Identity,
		EndpointType: "ai.cotal.manager", Logf: opts.Logf,
	})
	if err != nil {
		return nil, err
	}
	m.server = srv
	for _, c := range m.commands() {
		if err := srv.Register(c); err != nil {
			return nil, fmt.Errorf("registering %s: %w", c.Name, err)
		}
	}
	if err := srv.Register(ep.GoalResultCommand()); err != nil {
		return nil, err
	}
	return m, nil
}

// Start takes back the seats this instance's keepers hold (custody.go),
// then CAS-increments the epoch, writes the registration and serves.
func (m *Manager) Start(ctx context.Context) error {
	m.watchIdentities(ctx)
	m.reattach()
	m.resume()
	if err := m.server.Start(ctx); err != nil {
		return err
	}
	return m.openSessions()
}

// Launcher is the cotal binary seats start through and run as `cotal`.
func (m *Manager) Launcher() string { return m.cotalBinary() }

// InstanceID names this manager instance.
func (m *Manager) InstanceID() string { return m.iid }

// Epoch is the serving epoch.
func (m *Manager) Epoch() uint64 { return m.server.Epoch() }

// Live names the seats whose process still runs; each seat is asked under
// its own lock, since a launch sets its pty under that lock alone.
func (m *Manager) Live() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for n, s := range m.seats {
		if s.running() {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// StopAll stops every live seat gracefully (SIGTERM, then SIGKILL after 3
// s) and waits until each connector has written it offline.
func (m *Manager) StopAll(ctx context.Context) {
	m.mu.Lock()
	seats := make([]*Seat, 0, len(m.seats))
	for _, s := range m.seats {
		seats = append(seats, s)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range seats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.stop(ctx, true)
		}()
	}
	wg.Wait()
}

// Close stops serving, stops every seat and releases them: whoever closes
// a manager with live seats has already been told so (down refuses without
// --with-agents, the dashboard asks). Release instead leaves the seats
// their keepers hold running.
func (m *Manager) Close() error {
	err := m.server.Close()
	m.setClosing(closeStop)
	m.endSessions("", attach.ReasonManagerRestart)
	ctx, cancel := context.WithTimeout(context.Background(), closeStopWait)
	m.StopAll(ctx)
	cancel()
	m.cancel()
	m.wg.Wait()
	m.mu.Lock()
	for _, s := range m.seats {
		s.release()
	}
	m.mu.Unlock()
	return err
}

// Closing modes (Manager.closing).
const (
	closeStop    = "stop"    // Close: every seat is stopped
	closeRelease = "release" // Release: kept seats are let go of, the rest stopped
)

// closeStopWait bounds how long Close and Release wait for the seats they
// stop.
const closeStopWait = 10 * time.Second

func (m *Manager) setClosing(mode string) {
	m.mu.Lock()
	m.closing = mode
	m.mu.Unlock()
}

// adopt gives a started seat its process, unless the manager is closing:
// the sweep of Close or Release has passed the seat by (it had no process
// yet), so the process is stopped here (or, for a kept seat a Release lets
// go of, detached), or nothing would ever end it and Close would wait for
// it for ever.
func (m *Manager) adopt(s *Seat, proc *pty.Seat) {
	m.mu.Lock()
	closing := m.closing
	s.mu.Lock()
	s.pty, s.term = proc, &floorTerm{Seat: proc, f: &s.floor}
	kept := s.custodyMode == CustodyKeeper
	s.mu.Unlock()
	m.mu.Unlock()
	switch {
	case closing == "":
	case closing == closeRelease && kept:
		m.logf("seat %s started as the manager let go of its seats: it runs on in its keeper", s.name)
		go proc.Detach()
	default:
		m.logf("seat %s started as the manager closed: stopping it", s.name)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), closeStopWait)
			defer cancel()
			_ = s.stop(ctx, true)
		}()
	}
}

func (m *Manager) logf(format string, args ...any) {
	if m.opts.Logf != nil {
		m.opts.Logf(format, args...)
	}
}

// seat finds a seat by name.
func (m *Manager) seat(name string) (*Seat, *proto.Error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.seats[name]
	if !ok {
		names := make([]string, 0, len(m.seats))
		for n := range m.seats {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, proto.Refuse(proto.CodeNotFound, "no seat %q on manager %s (seats: %v)", name, m.iid, names)
	}
	return s, nil
}

// seatOf finds the seat a self-mode caller is: the broker vouches for the
// caller's owner, actor and lifecycle uid through the subject.
func (m *Manager) seatOf(c proto.Caller) (*Seat, *proto.Error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.seats {
		if s.id.Owner == c.Owner && s.id.Actor == c.Actor && s.uid == c.UID {
			return s, nil
		}
	}
	return nil, proto.Refuse(proto.CodeNotFound, "%s is not a seat of manager %s", c.ID(), m.iid)
}

// retire revokes an exited seat's credential; a failure is logged, and the
// seat's name stays taken until the credential is revoked.
func (m *Manager) retire(s *Seat) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(m.ctx), 5*time.Second)
	defer cancel()
	if err := m.opts.Minter.Retire(ctx, s.id, s.uid); err != nil {
		m.logf("seat %s: revoking its credential: %v", s.name, err)
	}
}
