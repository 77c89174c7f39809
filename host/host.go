package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
)

// Config says which space to serve and how.
type Config struct {
	Data    string // cotal's data dir (registry of spaces)
	Paths   config.Paths
	Open    bool
	Sync    string
	Port    int       // 0: a free port
	Log     io.Writer // broker warnings and the host's own notes; nil discards
	Verbose bool

	// ProjectDir is the folder the mesh serves: personas are read from its
	// .cotal/agents and broker.json names it, so the CLI run there finds
	// this mesh. Default: config.Folder of the working dir.
	ProjectDir string
	Readiness  time.Duration // seat spawn readiness bound; default seat.DefaultReadiness
	NoManager  bool          // serve no manager (tests, a mesh other processes supervise)

	// MaxSessions bounds the attach sessions the manager serves at once
	// (--max-sessions); 0 is the manager's default, 64.
	MaxSessions int

	// Servers, when set, name an existing NATS server or cluster with
	// JetStream the mesh lives on: no embedded broker is started, and the
	// streams and buckets get up to three replicas there. Creds is then
	// the credential the mesh's own connections use ("" mints them from
	// the space's keys, which the cluster must trust: `cotal broker
	// config`).
	Servers []string
	Creds   string
	// ManagerOnly joins a mesh another host made on Servers: nothing is
	// provisioned (the streams must be there), and the delivery service
	// stands by, serving only once the lease holder is gone.
	ManagerOnly bool
	// Leaf joins the embedded broker to a hub, or makes it one
	// (ResolveLeaf); the zero value is no link, and a start without one
	// undoes the link an earlier start made.
	Leaf broker.Leaf

	// Host, when set, is the address the embedded broker listens on
	// beyond loopback (0.0.0.0: every interface): clients must then dial
	// it with TLS, serving TLS's pair (none: a self-signed one generated
	// into the store), and broker.json records the certificate's pin.
	Host string
	TLS  broker.TLSFiles

	// Supervise, when set, makes this a supervise host: it serves only a
	// manager, on the mesh another process runs, and holds no lock.
	Supervise *Supervise

	// OnLifecycleEnded, when set, is told of each lifecycle the mesh ended
	// (see Host.lifecycleEnded), after the mesh's own part is done.
	OnLifecycleEnded func(p wire.Principal, uid string)
	// FloorQuiet is how long after a person's keystroke in an attach
	// session nothing is injected into the seat (tests shorten it); 0:
	// the manager's default.
	FloorQuiet time.Duration
	// HookGrace is how long a harness's hook may take to say it wrote
	// what it handed to the model (tests shorten it); 0: the manager's
	// default.
	HookGrace time.Duration
	// SandboxSkip names seat sandbox modes not to use (seat/sandbox's
	// Namespace, Landlock), to force a fallback.
	SandboxSkip []string
}

// Supervise is how a supervise host reaches the running mesh. Config.Open
// says whether that mesh runs open.
type Supervise struct {
	URL          string
	Creds        string          // the local operator's creds file; "" in open mode
	Trust        config.TLSTrust // how a TLS server at URL is verified
	InstanceFile string          // where the manager keeps its instance id; default the store's supervise.id
}

// Host is one cotal process serving a space: Start gives it ready (the
// mesh provisioned and broker.json written, or a supervise host's manager
// registered), Run keeps it until its context ends, Close undoes it. A
// failed Start has undone itself. Close is safe to call more than once
// and from any goroutine.
//
// Start sets every field before it returns except delivery and manager,
// which revocations and quit requests read from other goroutines while
// Start runs: mu guards those two.
type Host struct {
	cfg     Config
	life    context.Context // ends at Close: the host's own background work runs under it
	stop    context.CancelFunc
	started time.Time

	lock    *broker.Lock   // nil when supervising
	broker  *broker.Broker // nil when supervising
	unwatch func()         // stops following revocations; nil in open mode
	dnc     *nats.Conn     // the delivery service's own connection
	mnc     *nats.Conn     // the manager's own connection
	wrote   bool           // broker.json names this host
	// leafDone is closed when following the leaf link has stopped; nil
	// without a link.
	leafDone chan struct{}

	mu       sync.Mutex
	delivery *delivery.Service // nil in open mode: an open mesh is live-only
	manager  *seat.Manager     // nil with NoManager

	quit quitRule
	keep atomic.Bool // Close lets go of the seats in keepers (KeepSeatsOnClose)
	// preserveOnClose: Close preserves the seats (PreserveSeatsOnClose).
	preserveOnClose atomic.Bool
	// resume is the ready inventory the manager's start resumes; nil
	// when there is none.
	resume *seat.Inventory

	closeOnce sync.Once
	closeErr  error
}

// AlreadyRunningError is returned by Start (and Detach) when a process
// holds the space's store lock. It is not a failure for `up`: the space is
// up.
type AlreadyRunningError struct {
	Space string
	PID   int    // the lock's holder
	URL   string // "" when broker.json does not say (RecordErr)
	// Host and TLSPin are the running mesh's listener beyond loopback
	// and its certificate's fingerprint (up --host), "" without.
	Host, TLSPin string
	// RecordErr says what is wrong with broker.json, nil when it describes
	// the running mesh.
	RecordErr error
}

func (e *AlreadyRunningError) Error() string {
	if e.RecordErr != nil {
		return fmt.Sprintf("mesh %s already running (pid %d), but %v", e.Space, e.PID, e.RecordErr)
	}
	if e.TLSPin != "" {
		return fmt.Sprintf("mesh %s already running (pid %d, url %s, tls pin %s)", e.Space, e.PID, e.URL, e.TLSPin)
	}
	return fmt.Sprintf("mesh %s already running (pid %d, url %s)", e.Space, e.PID, e.URL)
}

// Start starts a host as cfg says. Its background work lives until Close,
// not until ctx ends; ctx bounds the start. On any failure what was
// started is stopped again.
func Start(ctx context.Context, cfg Config) (*Host, error) {
	if cfg.Sync == "" {
		cfg.Sync = config.SyncAlways
	}
	if cfg.ProjectDir == "" {
		cwd, _ := os.Getwd()
		cfg.ProjectDir = config.Folder(cwd)
	}
	life, stop := context.WithCancel(context.WithoutCancel(ctx))
	h := &Host{cfg: cfg, life: life, stop: stop, started: time.Now()}
	pipe := readyPipe()
	var err error
	if cfg.Supervise != nil {
		err = h.startSupervise(ctx)
	} else {
		err = h.startMesh(ctx)
	}
	if err != nil {
		_ = h.shutdown()
		if pipe != nil {
			_ = pipe.Close()
		}
		return nil, err
	}
	if pipe != nil {
		var custody []string
		if m := h.Manager(); m != nil {
			custody = m.CustodyReport().Lines()
		}
		sayReady(pipe, custody)
	}
	return h, nil
}

// startMesh locks the space, starts and provisions its broker, mints the
// local operator's creds, starts durable delivery and the manager, and
// writes broker.json.
func (h *Host) startMesh(ctx context.Context) error {
	cfg := h.cfg
	if err := config.EnsureDir(cfg.Paths.StoreDir, 0o700); err != nil {
		return err
	}
	lock, err := broker.AcquireLockPatiently(cfg.Paths.LockFile(), 3*time.Second)
	var lerr *broker.LockError
	if errors.As(err, &lerr) {
		return alreadyRunning(State{Running: true, PID: lerr.PID, Space: cfg.Paths.Space}.read(cfg.Paths))
	}
	if err != nil {
		return err
	}
	h.lock = lock
	// The delivery service's and the manager's contracts compile on the
	// side while the broker starts and provisions, which mostly waits on
	// the disk; both wait for them before they register.
	warmed := make(chan struct{})
	go func() {
		defer close(warmed)
		delivery.WarmSchemas()
		seat.WarmSchemas()
	}()
	defer func() { <-warmed }()
	if cfg.ManagerOnly {
		if err := h.checkJoinable(); err != nil {
			return err
		}
	}
	b, err := broker.Start(broker.Options{
		Paths: cfg.Paths, Open: cfg.Open, Sync: cfg.Sync, Port: h.port(),
		Log: cfg.Log, Verbose: cfg.Verbose, URLs: cfg.Servers, Creds: cfg.Creds, Leaf: cfg.Leaf,
		Host: cfg.Host, TLS: cfg.TLS,
	})
	if err != nil {
		return err
	}
	h.broker = b
	nc, err := b.Internal()
	if err != nil {
		return fmt.Errorf("connecting to the embedded broker: %w", err)
	}
	if cfg.ManagerOnly {
		if err := checkProvisioned(ctx, nc, cfg.Paths.Space, b.URL()); err != nil {
			return err
		}
	} else if err := broker.Provision(ctx, nc, cfg.Paths.Space, cfg.Open, b.MaxStore()); err != nil {
		return fmt.Errorf("provisioning space %s: %w", cfg.Paths.Space, err)
	} else if err := h.link(ctx, nc); err != nil {
		return err
	}
	if err := h.loadResume(); err != nil {
		return err
	}
	if !cfg.Open {
		if err := h.mintOperator(ctx, nc); err != nil {
			return err
		}
		if err := h.followRevocations(ctx, nc); err != nil {
			return err
		}
		if err := issue.ProvisionMinted(ctx, nc, cfg.Paths); err != nil {
			return err
		}
		<-warmed
		if err := h.startDelivery(ctx); err != nil {
			return err
		}
	}
	if !cfg.NoManager {
		<-warmed
		mnc, err := b.Connect("cotal-manager")
		if err != nil {
			return err
		}
		h.mnc = mnc
		if err := h.startManager(ctx, mnc, b.URL(), config.TLSTrust{Pin: b.TLSPin()}, ManagerFile(cfg.Paths)); err != nil {
			return err
		}
	}
	if cfg.Data != "" {
		if err := config.Remember(cfg.Data, cfg.Paths.Space, cfg.Paths.StoreDir); err != nil {
			return fmt.Errorf("recording space %s: %w", cfg.Paths.Space, err)
		}
	}
	mode := config.ModeAuth
	if cfg.Open {
		mode = config.ModeOpen
	}
	if err := config.WriteBrokerRecord(cfg.Paths, config.BrokerRecord{
		Space: cfg.Paths.Space, URL: b.URL(), PID: os.Getpid(), Mode: mode, Sync: cfg.Sync,
		Started: h.started.UTC(), StoreDir: cfg.Paths.StoreDir, MaxStore: b.MaxStore(),
		Folder: cfg.ProjectDir, External: b.External(), TLSPin: b.TLSPin(), Host: cfg.Host, Leaf: h.LeafRecord(),
	}); err != nil {
		return err
	}
	h.wrote = true
	return nil
}

// startDelivery starts the durable delivery service on its own connection.
func (h *Host) startDelivery(ctx context.Context) error {
	dnc, err := h.broker.Connect("cotal-delivery")
	if err != nil {
		return err
	}
	h.dnc = dnc
	diid, err := ep.LoadOrCreateInstanceID(filepath.Join(h.cfg.Paths.StoreDir, "delivery.id"))
	if err != nil {
		return fmt.Errorf("delivery endpoint instance id: %w", err)
	}
	// This process holds the store lock, so whoever held the delivery
	// lease of this store before is dead: take it at once. Not on an
	// external cluster: another machine's mesh may hold the lease there,
	// alive, and this one serves only once that lease lapses.
	d, err := delivery.Start(ctx, dnc, delivery.Options{Space: h.cfg.Paths.Space, InstanceID: diid, Logf: h.logf, TakeOver: !h.broker.External()})
	if err != nil {
		return fmt.Errorf("starting durable delivery: %w", err)
	}
	h.mu.Lock()
	h.delivery = d
	h.mu.Unlock()
	return nil
}

// startSupervise connects to the running mesh and serves a manager on it.
func (h *Host) startSupervise(ctx context.Context) error {
	s := h.cfg.Supervise
	nc, err := dial(s.URL, s.Creds, s.Trust, "cotal supervise")
	if err != nil {
		return err
	}
	h.mnc = nc
	file := s.InstanceFile
	if file == "" {
		file = filepath.Join(h.cfg.Paths.StoreDir, "supervise.id")
	}
	return h.startManager(ctx, nc, s.URL, s.Trust, file)
}

// mintOperator writes the local user's CLI creds. The lifecycle uid of an
// existing operator credential is kept, so DMs pending for the operator
// survive a restart (operatorUID).
func (h *Host) mintOperator(ctx context.Context, nc *nats.Conn) error {
	id := broker.Identity{Space: h.cfg.Paths.Space, Principal: issue.OperatorPrincipal(), Profile: wire.ProfileOperator}
	id.UID = h.operatorUID(ctx, nc, id.Principal)
	c, err := h.broker.Authority().Mint(id)
	if err != nil {
		return fmt.Errorf("minting operator creds: %w", err)
	}
	if err := broker.WriteCreds(h.cfg.Paths.OperatorCreds(), c); err != nil {
		return err
	}
	return broker.ProvisionIdentity(ctx, nc, c.Identity)
}

// Close marks broker.json stopped and stops everything the host started.
func (h *Host) Close() error {
	h.closeOnce.Do(func() { h.closeErr = h.shutdown() })
	return h.closeErr
}

// shutdown stops what start started, in the reverse order, whatever part
// of it ran: the manager (and its seats), delivery, revocation following,
// the host's background work, the broker, and last the lock.
func (h *Host) shutdown() error {
	var err error
	if h.wrote {
		rec, rerr := config.ReadBrokerRecord(h.cfg.Paths)
		if rerr == nil && rec.PID == os.Getpid() {
			rec.Stopped = time.Now().UTC()
			err = config.WriteBrokerRecord(h.cfg.Paths, rec)
		}
	}
	h.mu.Lock()
	mgr, d := h.manager, h.delivery
	h.mu.Unlock()
	switch {
	case mgr != nil && (h.preserveOnClose.Load() || h.preservesSeats()):
		h.preserve(mgr)
		_ = mgr.Close()
	case mgr != nil && (h.keep.Load() || h.keepsSeats()):
		if kept := mgr.Kept(); len(kept) > 0 {
			h.logf("stopping; %d seat(s) run on in their keepers for the next up: %s", len(kept), strings.Join(kept, ", "))
		}
		_ = mgr.Release()
	case mgr != nil:
		_ = mgr.Close()
	}
	if h.mnc != nil {
		h.mnc.Close()
	}
	if d != nil {
		d.Close()
	}
	if h.dnc != nil {
		h.dnc.Close()
	}
	if h.unwatch != nil {
		h.unwatch()
	}
	h.stop()
	if h.leafDone != nil {
		<-h.leafDone
	}
	if h.broker != nil {
		h.broker.Shutdown()
	}
	h.lock.Release()
	return err
}

// Broker is the running broker, nil for a supervise host.
func (h *Host) Broker() *broker.Broker { return h.broker }

// Manager is the manager this process serves, nil with NoManager.
func (h *Host) Manager() *seat.Manager {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.manager
}

// Delivery is the durable delivery service, nil in open mode and when
// supervising.
func (h *Host) Delivery() *delivery.Service {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.delivery
}

func (h *Host) logf(format string, args ...any) {
	if h.cfg.Log == nil {
		return
	}
	who := "mesh"
	if h.cfg.Supervise != nil {
		who = "manager"
	}
	fmt.Fprintf(h.cfg.Log, "%s %s: %s\n", time.Now().Format(time.RFC3339), who, fmt.Sprintf(format, args...))
}
