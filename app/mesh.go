package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
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
	Log     io.Writer // broker warnings; nil discards
	Verbose bool

	ProjectDir string        // where personas (.cotal/agents) are read; default the working dir
	Readiness  time.Duration // seat spawn readiness bound; default 30 s
	NoManager  bool          // serve no manager (tests, a mesh other processes supervise)

	// OnLifecycleEnded, when set, is told of each lifecycle the mesh ended
	// (see Mesh.lifecycleEnded), after the mesh's own part is done.
	OnLifecycleEnded func(p wire.Principal, uid string)
	// SandboxSkip names seat sandbox modes not to use (seat/sandbox's
	// Namespace, Landlock), to force a fallback.
	SandboxSkip []string
}

// AlreadyRunningError is returned by Start when a live process serves the
// space. It is not a failure for `up`: the space is up.
type AlreadyRunningError struct {
	Space string
	PID   int
	URL   string
}

func (e *AlreadyRunningError) Error() string {
	return fmt.Sprintf("mesh %s already running (pid %d, url %s)", e.Space, e.PID, e.URL)
}

// Mesh is one running mesh process. Start gives a ready, provisioned mesh
// whose broker.json is written; Close undoes it. Mesh is safe for
// concurrent Close.
type Mesh struct {
	cfg      Config
	lock     *broker.Lock
	broker   *broker.Broker
	delivery *delivery.Service // nil in open mode: an open mesh is live-only
	dnc      *nats.Conn        // the delivery service's own connection
	manager  *seat.Manager     // nil with NoManager
	mnc      *nats.Conn        // the manager's own connection
	unwatch  func()            // stops following revocations; nil in open mode
	started  time.Time

	closeOnce sync.Once
	closeErr  error
}

// Start locks the space, starts and provisions its broker, mints the local
// operator's creds and writes broker.json. On any failure what was started
// is stopped again.
func Start(ctx context.Context, cfg Config) (*Mesh, error) {
	if cfg.Sync == "" {
		cfg.Sync = config.SyncAlways
	}
	if err := config.EnsureDir(cfg.Paths.StoreDir, 0o700); err != nil {
		return nil, err
	}
	lock, err := broker.AcquireLockPatiently(cfg.Paths.LockFile(), 3*time.Second)
	var lerr *broker.LockError
	if errors.As(err, &lerr) {
		rec, _ := config.ReadBrokerRecord(cfg.Paths)
		return nil, &AlreadyRunningError{Space: cfg.Paths.Space, PID: lerr.PID, URL: rec.URL}
	}
	if err != nil {
		return nil, err
	}
	m := &Mesh{cfg: cfg, lock: lock, started: time.Now()}
	if err := m.start(ctx); err != nil {
		if m.broker != nil {
			m.broker.Shutdown()
		}
		lock.Release()
		return nil, err
	}
	return m, nil
}

func (m *Mesh) start(ctx context.Context) error {
	cfg := m.cfg
	b, err := broker.Start(broker.Options{
		Paths: cfg.Paths, Open: cfg.Open, Sync: cfg.Sync, Port: cfg.Port,
		Log: cfg.Log, Verbose: cfg.Verbose,
	})
	if err != nil {
		return err
	}
	m.broker = b
	nc, err := b.Internal()
	if err != nil {
		return fmt.Errorf("connecting to the embedded broker: %w", err)
	}
	if err := broker.Provision(ctx, nc, cfg.Paths.Space, cfg.Open); err != nil {
		return fmt.Errorf("provisioning space %s: %w", cfg.Paths.Space, err)
	}
	if !cfg.Open {
		if err := m.mintOperator(ctx, nc); err != nil {
			return err
		}
		if err := m.followRevocations(ctx, nc); err != nil {
			return err
		}
		if err := ProvisionMinted(ctx, nc, cfg.Paths); err != nil {
			return err
		}
		dnc, err := b.Connect("cotal-delivery")
		if err != nil {
			return err
		}
		diid, err := ep.LoadOrCreateInstanceID(filepath.Join(cfg.Paths.StoreDir, "delivery.id"))
		if err != nil {
			dnc.Close()
			return fmt.Errorf("delivery endpoint instance id: %w", err)
		}
		// This process holds the store lock, so whoever held the delivery
		// lease of this store before is dead: take it at once.
		d, err := delivery.Start(ctx, dnc, delivery.Options{Space: cfg.Paths.Space, InstanceID: diid, Logf: m.logf, TakeOver: true})
		if err != nil {
			dnc.Close()
			return fmt.Errorf("starting durable delivery: %w", err)
		}
		m.delivery, m.dnc = d, dnc
	}
	if !cfg.NoManager {
		if err := m.startManager(ctx); err != nil {
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
	return config.WriteBrokerRecord(cfg.Paths, config.BrokerRecord{
		Space: cfg.Paths.Space, URL: b.URL(), PID: os.Getpid(), Mode: mode, Sync: cfg.Sync,
		Started: m.started.UTC(), StoreDir: cfg.Paths.StoreDir, MaxStore: b.MaxStore(),
	})
}

// OperatorPrincipal is the local user's principal: owner local, actor the
// login name made into a token.
func OperatorPrincipal() wire.Principal {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	actor := strings.ReplaceAll(wire.SanitizeToken(name), "-", "_")
	if len(actor) > 64 {
		actor = actor[:64]
	}
	return wire.Principal{Owner: "local", Actor: actor}
}

// mintOperator writes the local user's CLI creds. The lifecycle uid of an
// existing operator credential is kept, so DMs pending for the operator
// survive a restart.
func (m *Mesh) mintOperator(ctx context.Context, nc *nats.Conn) error {
	id := broker.Identity{Space: m.cfg.Paths.Space, Principal: OperatorPrincipal(), Profile: broker.ProfileOperator}
	if old, err := broker.ReadCredsIdentity(m.cfg.Paths.OperatorCreds()); err == nil && old.Principal == id.Principal && wire.ValidLifecycleUID(old.UID) {
		id.UID = old.UID
	}
	c, err := m.broker.Authority().Mint(id)
	if err != nil {
		return fmt.Errorf("minting operator creds: %w", err)
	}
	if err := broker.WriteCreds(m.cfg.Paths.OperatorCreds(), c); err != nil {
		return err
	}
	return broker.ProvisionIdentity(ctx, nc, c.Identity)
}

// Broker is the running broker.
func (m *Mesh) Broker() *broker.Broker { return m.broker }

// Run blocks until ctx ends, watching that JetStream stays on (a full disk
// switches it off), then closes the mesh.
func (m *Mesh) Run(ctx context.Context) error {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	warned := false
	for {
		select {
		case <-ctx.Done():
			return m.Close()
		case <-t.C:
			if !m.broker.JetStreamEnabled() && !warned {
				warned = true
				if m.cfg.Log != nil {
					fmt.Fprintf(m.cfg.Log, "%s mesh error: JetStream switched itself off (disk full under %s?); durable delivery is down until restart\n",
						time.Now().Format(time.RFC3339), m.cfg.Paths.StoreDir)
				}
			}
		}
	}
}

// Close marks broker.json stopped, stops the broker and drops the lock.
func (m *Mesh) Close() error {
	m.closeOnce.Do(func() {
		rec, err := config.ReadBrokerRecord(m.cfg.Paths)
		if err == nil && rec.PID == os.Getpid() {
			rec.Stopped = time.Now().UTC()
			m.closeErr = config.WriteBrokerRecord(m.cfg.Paths, rec)
		}
		if m.manager != nil {
			_ = m.manager.Close()
			m.mnc.Close()
		}
		if m.delivery != nil {
			m.delivery.Close()
			m.dnc.Close()
		}
		if m.unwatch != nil {
			m.unwatch()
		}
		m.broker.Shutdown()
		m.lock.Release()
	})
	return m.closeErr
}

// startManager serves the manager endpoint from this process.
func (m *Mesh) startManager(ctx context.Context) error {
	nc, err := m.broker.Connect("cotal-manager")
	if err != nil {
		return err
	}
	proj := m.cfg.ProjectDir
	if proj == "" {
		cwd, _ := os.Getwd()
		if proj = config.ProjectDir(cwd); proj == "" {
			proj = cwd
		}
	}
	mgr, err := seat.New(seat.Options{
		Space: m.cfg.Paths.Space, URL: m.broker.URL(), Conn: nc,
		Identity:     ep.Identity{Principal: wire.Principal{Owner: "local", Actor: "cotal_manager"}, UID: wire.NewLifecycleUID()},
		InstanceFile: ManagerFile(m.cfg.Paths), ProjectDir: proj,
		Minter: NewSeatMinter(m.cfg.Paths, nc, m.cfg.Open), Open: m.cfg.Open,
		Readiness: m.cfg.Readiness, Logf: m.logf,
		Launcher: launcher(), RunDir: RunDir(m.cfg.Paths), Protect: SeatProtect(m.cfg.Paths), SandboxSkip: m.cfg.SandboxSkip,
	})
	if err != nil {
		nc.Close()
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := mgr.Start(sctx); err != nil {
		nc.Close()
		return fmt.Errorf("starting the manager: %w", err)
	}
	m.manager, m.mnc = mgr, nc
	return nil
}

// launcher is this executable, which is also the seat launcher (main and
// every test binary that spawns seats call sandbox.Main first); "" when it
// cannot be found, and seats then start unsandboxed, saying so.
func launcher() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

// Manager is the manager this process serves, nil with NoManager.
func (m *Mesh) Manager() *seat.Manager { return m.manager }

// Delivery is the durable delivery service, nil in open mode.
func (m *Mesh) Delivery() *delivery.Service { return m.delivery }

func (m *Mesh) logf(format string, args ...any) {
	if m.cfg.Log != nil {
		fmt.Fprintf(m.cfg.Log, "%s mesh: %s\n", time.Now().Format(time.RFC3339), fmt.Sprintf(format, args...))
	}
}

// MintedDir holds one registry file per identity minted while the mesh was
// down; Start provisions each of them.
func MintedDir(p config.Paths) string { return filepath.Join(p.AuthDir(), "minted") }
