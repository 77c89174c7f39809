package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// env is the private mesh every path runs on: a host (broker, delivery,
// manager) in a temporary store, the operator's connections for the
// floors, and what a path opened, closed again after it (cleanup). On
// --url servers it is an open space of its own there, under a name no
// other run takes, whose streams and buckets close removes.
type env struct {
	o       Options
	space   string
	open    bool   // an open space on the --url servers
	dir     string // removed at close
	paths   config.Paths
	project string
	h       *host.Host
	b       *broker.Broker
	op      *nats.Conn // in-process operator connection: set-up and streams
	js      jetstream.JetStream
	opCreds string
	c       *ep.Client // the operator calling the manager
	mgr     *client.Client
	iid     string // the manager's instance

	seq     atomic.Int64
	mu      sync.Mutex // guards closers: members are set up in parallel
	closers []func()
	home    string // COTAL_HOME before the run
	hadHome bool
}

// startEnv starts the mesh in a fresh temporary store, with COTAL_HOME
// pointing into it while the run lasts, so nothing the seats run touches
// another store.
func startEnv(ctx context.Context, o Options) (*env, error) {
	dir, err := os.MkdirTemp("", "cotal-bench-")
	if err != nil {
		return nil, fmt.Errorf("making the bench's temporary store: %w", err)
	}
	e := &env{o: o, space: "bench", dir: dir, project: filepath.Join(dir, "project")}
	if o.URLs != nil {
		e.space, e.open = "bench_"+strings.ToLower(wire.NewLifecycleUID()[:10]), true
	}
	e.home, e.hadHome = os.LookupEnv("COTAL_HOME")
	if err := os.Setenv("COTAL_HOME", filepath.Join(dir, "home")); err != nil {
		return nil, err
	}
	if err := e.start(ctx); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *env) start(ctx context.Context) error {
	e.paths = config.Paths{Space: e.space, StoreDir: filepath.Join(e.dir, "store")}
	if err := os.MkdirAll(config.AgentsDir(e.project), 0o700); err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	h, err := host.Start(sctx, host.Config{Paths: e.paths, ProjectDir: e.project, Readiness: within, Servers: e.o.URLs, Open: e.open})
	if err != nil {
		if e.open && strings.Contains(strings.ToLower(err.Error()), "authorization") {
			return fmt.Errorf("starting the bench mesh on %s: %w (bench --url runs an open space of its own, so it needs servers that take connections without auth)", strings.Join(e.o.URLs, ","), err)
		}
		return fmt.Errorf("starting the bench mesh: %w", err)
	}
	e.h, e.b = h, h.Broker()
	if e.op, err = e.b.Connect("bench operator"); err != nil {
		return err
	}
	if e.js, err = jetstream.New(e.op); err != nil {
		return err
	}
	caller := proto.Caller{Owner: "local", Actor: "bench_operator", UID: wire.NewLifecycleUID()}
	if !e.open {
		e.opCreds = e.paths.OperatorCreds()
		id, err := broker.ReadCredsIdentity(e.opCreds)
		if err != nil {
			return fmt.Errorf("reading the bench mesh's operator: %w", err)
		}
		caller = proto.Caller{Owner: id.Principal.Owner, Actor: id.Principal.Actor, UID: id.UID}
	}
	if e.c, err = ep.NewClient(e.op, ep.ClientOptions{Space: e.space, Caller: caller}); err != nil {
		return err
	}
	e.mgr = client.New(e.c)
	e.iid = h.Manager().InstanceID()
	return nil
}

// close stops the mesh and removes its store (and, on --url servers, the
// space's streams and buckets there).
func (e *env) close() {
	e.cleanup()
	if e.h != nil {
		_ = e.h.Close()
	}
	if e.open && e.js != nil {
		e.removeSpace()
	}
	if e.op != nil {
		e.op.Close()
	}
	if e.hadHome {
		_ = os.Setenv("COTAL_HOME", e.home)
	} else {
		_ = os.Unsetenv("COTAL_HOME")
	}
	_ = os.RemoveAll(e.dir)
}

// removeSpace deletes the streams and key-value buckets of the run's
// space from the --url servers: every one whose name ends in the space's
// token, which no other space's name does.
func (e *env) removeSpace() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	suffix := "_" + wire.SanitizeToken(e.space)
	var names []string
	for name := range e.js.StreamNames(ctx).Name() {
		if strings.HasSuffix(name, suffix) {
			names = append(names, name)
		}
	}
	for _, name := range names {
		_ = e.js.DeleteStream(ctx, name)
	}
}

// cleanup closes what the last path opened, last first.
func (e *env) cleanup() {
	e.mu.Lock()
	closers := e.closers
	e.closers = nil
	e.mu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
}

// drain waits, for at most a minute, until the delivery service's fan-out
// writer has taken every post the rows before left in CHAT: a live row
// posts thousands, which the writer takes one by one, and a durable row
// measured behind that backlog would time the backlog.
func (e *env) drain(ctx context.Context) {
	cons, err := e.js.Consumer(ctx, wire.ChatStream(e.space), delivery.FanoutConsumer)
	if err != nil {
		return
	}
	end := time.Now().Add(time.Minute)
	for time.Now().Before(end) && ctx.Err() == nil {
		info, err := cons.Info(ctx)
		if err != nil || info.NumPending+uint64(info.NumAckPending) == 0 {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// defer_ has cleanup run f.
func (e *env) defer_(f func()) {
	e.mu.Lock()
	e.closers = append(e.closers, f)
	e.mu.Unlock()
}

// each runs set-up f for 0..n-1, at most par at a time (a hundred
// members minted and connected one by one take longer than their
// measure), and returns the first error.
func each(n, par int, f func(i int) error) error {
	sem := make(chan struct{}, par)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs <- f(i)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// name is a fresh actor name with prefix, unique in the run.
func (e *env) name(prefix string) string {
	return fmt.Sprintf("%s%d", prefix, e.seq.Add(1))
}

// who is an identity a path connects as: its creds file on an
// authenticated mesh; on an open one its name, role and channels, and one
// lifecycle for all its connections, as a creds file would carry.
type who struct {
	creds string
	id    broker.Identity
	uid   string
}

// mint mints and provisions id as a running mesh does and writes its
// creds file; on an open space there is nothing to mint.
func (e *env) mint(ctx context.Context, id broker.Identity) (who, error) {
	id.Space = e.space
	if id.Principal.Owner == "" {
		id.Principal.Owner = "local"
	}
	if e.open {
		return who{id: id, uid: wire.NewLifecycleUID()}, nil
	}
	cr, err := e.b.Authority().Mint(id)
	if err != nil {
		return who{}, err
	}
	if err := broker.ProvisionIdentity(ctx, e.op, cr.Identity); err != nil {
		return who{}, err
	}
	path := filepath.Join(e.dir, id.Principal.Actor+".creds")
	if err := broker.WriteCreds(path, cr); err != nil {
		return who{}, err
	}
	return who{creds: path, id: id}, nil
}

// agent mints an agent that subscribes to subscribe and may publish to
// allowPub (nil: the default rights), and connects it as o says.
func (e *env) agent(ctx context.Context, actor string, subscribe, allowPub []string, o mesh.Options) (*mesh.Endpoint, error) {
	w, err := e.mint(ctx, broker.Identity{
		Principal: wire.Principal{Actor: actor}, Subscribe: subscribe,
		AllowSubscribe: wire.SameAsSubscribe(subscribe), AllowPublish: allowPub,
	})
	if err != nil {
		return nil, err
	}
	return e.connect(ctx, w, o)
}

// connect connects an endpoint as w over TCP.
func (e *env) connect(ctx context.Context, w who, o mesh.Options) (*mesh.Endpoint, error) {
	o.URL, o.Creds = e.b.URL(), w.creds
	if w.creds == "" {
		o.Space, o.Name, o.Role, o.LifecycleUID = e.space, w.id.Principal.Actor, w.id.Role, w.uid
		if o.Subscribe == nil {
			o.Subscribe = w.id.Subscribe
		}
	}
	cctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	ep, err := mesh.Connect(cctx, o)
	if err != nil {
		return nil, err
	}
	e.defer_(func() { _ = ep.Close() })
	return ep, nil
}

// raw is an operator connection over TCP, as a floor's client: it pays
// the same authenticated-connection costs as an agent.
func (e *env) raw() (*nats.Conn, error) {
	var opts []nats.Option
	if e.opCreds != "" {
		opts = append(opts, nats.UserCredentials(e.opCreds))
	}
	nc, err := nats.Connect(e.b.URL(), opts...)
	if err != nil {
		return nil, err
	}
	e.defer_(nc.Close)
	return nc, nil
}

// stream makes a file stream like the mesh's (SyncAlways is the
// broker's; on --url servers, as many replicas as the mesh's DM stream)
// on subjects, removed again after the path.
func (e *env) stream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	cfg.Storage = jetstream.FileStorage
	if cfg.Duplicates == 0 {
		cfg.Duplicates = 2 * time.Minute
	}
	if dm, err := e.js.Stream(ctx, wire.DMStream(e.space)); err == nil {
		cfg.Replicas = dm.CachedInfo().Config.Replicas
	}
	st, err := e.js.CreateStream(ctx, cfg)
	if err != nil {
		return nil, err
	}
	e.defer_(func() { _ = e.js.DeleteStream(context.WithoutCancel(ctx), cfg.Name) })
	return st, nil
}

// floorPull are the raw floors' pull options, with more: a short expiry,
// so a pull request lost to a consumer whose leader a cluster has not
// settled yet is sent again within a couple of seconds, not after the
// default's heartbeats, longer than a measure waits.
func floorPull(more ...jetstream.PullConsumeOpt) []jetstream.PullConsumeOpt {
	return append([]jetstream.PullConsumeOpt{jetstream.PullExpiry(2 * time.Second)}, more...)
}

// sees waits until from can resolve to as a DM target: on a cluster the
// first replay of the presence bucket can outlast the watcher's own
// wait, and a measure must not start on a refusal that says retry.
func sees(ctx context.Context, from *mesh.Endpoint, to string) error {
	w, err := from.Watcher(ctx)
	if err != nil {
		return err
	}
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := from.ResolvePeer(ctx, to)
		if err == nil || !errors.Is(err, mesh.ErrUnverifiable) && !errors.Is(err, mesh.ErrNoPeer) {
			return err
		}
		select {
		case <-w.Changes():
		case <-tick.C:
		case <-deadline.C:
			return fmt.Errorf("%s is not on the roster within %s: %w", to, within, err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
