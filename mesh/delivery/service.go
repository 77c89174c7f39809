// Package delivery is the space's durable delivery service: a fan-out
// writer that stores a copy of every durable-channel post (and of every
// @mention on a live channel) for each member owed one, a trusted reader
// that re-checks each copy against the member's read ACL and membership
// before handing it to the member's backstop durable, and the control
// operations (durable join and leave, memberships, history) members call
// as themselves. It runs as goroutines of the mesh process on a trusted
// connection, and holds a lease so that only one service serves a space.
// It imports mesh, mesh/ep, mesh/presence and mesh/wire, never seat, tui,
// host or broker.
package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Consumer names and timings of the service.
const (
	FanoutConsumer = "fanout"
	ReaderConsumer = "reader"
	AckWait        = 60 * time.Second
	LeaseKey       = "lease.0"
	LeaseRenew     = 10 * time.Second // the lease bucket's TTL is 30 s
	leaseIO        = 2 * time.Second  // bounds each lease read and write of the holder
	retryDelay     = 2 * time.Second
	maxDeliver     = 10 // a reader entry for an unknown lifecycle is terminated after this many tries
)

// Options configure the service.
type Options struct {
	Space      string
	Instance   string // names this incarnation in the lease; default host/pid
	InstanceID string // the delivery endpoint's persisted instance id; default a fresh one
	Logf       func(format string, args ...any)

	// TakeOver says the caller holds the space's store lock, so any lease
	// it finds at start belongs to a predecessor that is dead: the service
	// takes it at once instead of waiting out its TTL, and redelivers what
	// the predecessor had in flight.
	TakeOver bool
}

// lease is the record under LeaseKey.
type lease struct {
	Holder      string    `json:"holder"`
	Incarnation string    `json:"incarnation"`
	Since       time.Time `json:"since"`
	Ready       bool      `json:"ready"`
	// Endpoint is the instance id of the delivery endpoint the holder
	// serves once ready: a standby probes its instance rail (standby.go).
	Endpoint string `json:"endpoint,omitempty"`
}

// Service is a running delivery service. Start returns at once; the
// service serves once it holds the lease (a crashed predecessor's lease
// lapses within its 30 s TTL).
//
// Lock order: ctlMu, then gate.mu, then life.mu; hostsMu, then an
// agentHost's mu; mu is taken alone. ctlMu is held across I/O (it
// serializes control operations, each a few KV and stream calls); the
// others guard maps and are never held while waiting on the broker (a
// host's endpoint is connected outside hostsMu and installed under it). No stored copy is
// written under a lock: the gate orders copies against a lifecycle's end.
type Service struct {
	opts      Options
	nc        *nats.Conn
	js        jetstream.JetStream
	space     string
	reg       *mesh.Registry
	store     *store
	aclKV     jetstream.KeyValue
	leaseKV   jetstream.KeyValue
	recordsKV jetstream.KeyValue
	life      *lifecycles
	roster    *presence.Watcher
	ctlMu     sync.Mutex // serializes control operations
	chat      jetstream.Stream
	incarn    string
	iid       string        // the delivery endpoint's instance id, named in the lease
	leaseRev  atomic.Uint64 // the lease revision we wrote last: run writes it, Close reads it

	// prober asks whether the lease holder's endpoint has a responder;
	// silent and fence are the run goroutine's alone (standby.go).
	prober     *ep.Client
	silent     silence
	silentFrom time.Time     // the first no-responders of the holder whose lease it took, until it serves
	fenceLease bool          // the lease was taken from a silent holder: wait LeaseFence before serving
	probes     atomic.Uint64 // probes made, for tests

	inflight sync.WaitGroup // reader transfers waiting for their acks

	// gate: every fan-out write and reader transfer begins on it for its
	// lifecycle before it stores a copy and finishes once the copy is
	// stored; EndLifecycle marks the lifecycle ended on it and waits for
	// the writes begun before, so no copy for an ended lifecycle lands
	// after the mark.
	gate *endGate

	takeOver bool // the first acquire may overwrite a dead predecessor's lease
	tookOver bool // it did: serve redelivers the predecessor's in-flight work

	mu       sync.Mutex
	serving  bool
	stored   map[string]*backlog // member principal.uid -> backstop estimate
	consumes []jetstream.ConsumeContext
	endpoint *ep.Server // the delivery endpoint, served while the lease is held

	warned map[string]time.Time // under mu: when warnOnce last spoke of a key

	hostsMu sync.Mutex
	hosts   map[string]*agentHost    // mediated lifecycles by principal.uid
	opening map[string]chan struct{} // hosts being connected, closed when done
	// hostsGen counts closeHosts calls: a host whose connect began before
	// one is discarded. beforeConnect is a test's hook, run before a host's
	// endpoint connects.
	hostsGen      uint64
	beforeConnect func(wire.Principal)

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the run goroutine ends
	// stopRun ends the run goroutine (Close); closeOnce makes Close safe
	// to repeat.
	stopRun   chan struct{}
	closeOnce sync.Once
}

// Start opens what the service needs and begins contending for the lease.
func Start(ctx context.Context, nc *nats.Conn, opts Options) (*Service, error) {
	if opts.Instance == "" {
		opts.Instance = defaultInstance(os.Getpid())
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	s := &Service{opts: opts, nc: nc, js: js, space: opts.Space, incarn: wire.NewLifecycleUID(), iid: opts.InstanceID, done: make(chan struct{}), stopRun: make(chan struct{}), hosts: map[string]*agentHost{}, opening: map[string]chan struct{}{}, takeOver: opts.TakeOver}
	if s.iid == "" {
		s.iid = ep.NewInstanceID()
	}
	if s.prober, err = ep.NewClient(nc, ep.ClientOptions{Space: s.space, Caller: proto.Caller{Owner: "local", Actor: ServiceActor, UID: s.incarn}, SharedConn: true}); err != nil {
		return nil, fmt.Errorf("delivery service: %w", err)
	}
	if s.reg, err = mesh.OpenRegistry(ctx, js, s.space); err != nil {
		return nil, err
	}
	kv := func(name string) (jetstream.KeyValue, error) {
		b, err := js.KeyValue(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("delivery service: bucket %s: %w", name, err)
		}
		return b, nil
	}
	members, err := kv(wire.MembersBucket(s.space))
	if err != nil {
		return nil, err
	}
	s.store = newStore(members, opts.Instance)
	if s.aclKV, err = kv(wire.ACLBucket(s.space)); err != nil {
		return nil, err
	}
	if s.leaseKV, err = kv(wire.DeliveryBucket(s.space)); err != nil {
		return nil, err
	}
	if s.recordsKV, err = kv(wire.RecordsBucket(s.space)); err != nil {
		return nil, err
	}
	pres, err := kv(wire.PresenceBucket(s.space))
	if err != nil {
		return nil, err
	}
	if s.chat, err = js.Stream(ctx, wire.ChatStream(s.space)); err != nil {
		return nil, fmt.Errorf("delivery service: %w", err)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.roster = presence.NewWatcher(pres)
	if err := s.roster.Start(s.ctx); err != nil {
		s.cancel()
		return nil, err
	}
	s.life = newLifecycles(s.aclKV, s.recordsKV)
	s.gate = newEndGate(s.life)
	if err := s.life.start(s.ctx, ctx); err != nil {
		s.cancel()
		s.roster.Close()
		return nil, err
	}
	go s.run()
	go s.sweepHosts()
	return s, nil
}

// run contends for the lease, serves while holding it, and renews it.
func (s *Service) run() {
	defer close(s.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		if !s.isServing() {
			if err := s.acquire(); err == nil && s.fenced() {
				if err := s.serve(); err != nil {
					s.logf("delivery service could not start serving: %v", err)
					s.stopServing()
				} else {
					s.servedAfterSilence()
				}
			}
		} else {
			if err := s.renew(); err != nil {
				s.logf("delivery service lost its lease (%v): it stops serving", err)
				s.stopServing()
			}
		}
		select {
		case <-s.ctx.Done():
			return
		case <-s.stopRun:
			return
		case <-t.C:
		}
	}
}

// leaseValue is this service's lease record now.
func (s *Service) leaseValue(ready bool) []byte {
	b, _ := json.Marshal(lease{Holder: s.opts.Instance, Incarnation: s.incarn, Since: time.Now().UTC(), Ready: ready, Endpoint: s.iid})
	return b
}

func (s *Service) acquire() error {
	b := s.leaseValue(false)
	rev, err := s.leaseKV.Create(s.ctx, LeaseKey, b)
	takeOver := s.takeOver
	s.takeOver = false
	if err != nil && errors.Is(err, jetstream.ErrKeyExists) {
		if takeOver {
			rev, err = s.takeLease(b)
		} else {
			rev, err = s.takeForeignLease(b)
		}
	}
	if err != nil {
		return err
	}
	s.leaseRev.Store(rev)
	return nil
}

// takeLease overwrites a dead predecessor's lease, compare-and-set on the
// revision read, so a live contender that wrote in between still wins.
func (s *Service) takeLease(b []byte) (uint64, error) {
	ent, err := s.leaseKV.Get(s.ctx, LeaseKey)
	if err != nil {
		return 0, err
	}
	rev, err := s.leaseKV.Update(s.ctx, LeaseKey, b, ent.Revision())
	if err != nil {
		return 0, err
	}
	var old lease
	_ = json.Unmarshal(ent.Value(), &old)
	s.logf("delivery service took over the lease of %s, whose process is gone", old.Holder)
	s.tookOver = true
	return rev, nil
}

// valid reports whether a lease record is one a delivery service wrote.
func (l lease) valid() bool { return l.Holder != "" && wire.ValidLifecycleUID(l.Incarnation) }

// readLease decodes a lease entry; ok is false for a value no service wrote.
func readLease(ent jetstream.KeyValueEntry) (lease, bool) {
	var l lease
	return l, json.Unmarshal(ent.Value(), &l) == nil && l.valid()
}

// takeForeignLease takes the lease key when what it holds is no service's
// lease (no one entitled wrote it), compare-and-set on its revision; a
// real lease of another service is left alone.
func (s *Service) takeForeignLease(b []byte) (uint64, error) {
	ent, err := s.leaseKV.Get(s.ctx, LeaseKey)
	if err != nil {
		return 0, err
	}
	if l, ok := readLease(ent); ok {
		return s.takeSilentLease(ent, l, b)
	}
	rev, err := s.leaseKV.Update(s.ctx, LeaseKey, b, ent.Revision())
	if err != nil {
		return 0, err
	}
	s.logf("delivery service: the lease key held %d bytes that are no service's lease; it took the lease", len(ent.Value()))
	return rev, nil
}

// renew rewrites the lease every LeaseRenew; a lost compare-and-set
// means another service took over. A lease key rewritten with something
// that is no service's lease is taken back at once, so garbage there never
// stops delivery.
func (s *Service) renew() error {
	ctx, cancel := context.WithTimeout(s.ctx, leaseIO)
	defer cancel()
	ent, err := s.leaseKV.Get(ctx, LeaseKey)
	if err != nil {
		return err
	}
	if ent.Revision() != s.leaseRev.Load() {
		if _, ok := readLease(ent); ok {
			return errors.New("the lease was rewritten by someone else")
		}
		rev, err := s.leaseKV.Update(ctx, LeaseKey, s.leaseValue(true), ent.Revision())
		if err != nil {
			return fmt.Errorf("taking back the lease from a foreign value: %w", err)
		}
		s.logf("delivery service: the lease key was overwritten with %d bytes that are no service's lease; it took the lease back", len(ent.Value()))
		s.leaseRev.Store(rev)
		return nil
	}
	if time.Since(ent.Created()) < LeaseRenew {
		return nil
	}
	rev, err := s.leaseKV.Update(ctx, LeaseKey, s.leaseValue(true), s.leaseRev.Load())
	if err != nil {
		return err
	}
	s.leaseRev.Store(rev)
	return nil
}

// serve binds the fan-out and reader consumers and the control
// responder, then marks the lease ready.
func (s *Service) serve() error {
	if err := s.store.load(s.ctx); err != nil {
		return fmt.Errorf("loading memberships: %w", err)
	}
	if n := len(s.store.skipped); n > 0 {
		s.logf("delivery service: %d key(s) of the members bucket hold no membership it wrote (%s); they are skipped", n, strings.Join(s.store.skipped[:min(n, 5)], ", "))
	}
	fan, err := ensureConsumer(s.ctx, s.js, wire.ChatStream(s.space), jetstream.ConsumerConfig{
		Durable: FanoutConsumer, FilterSubject: wire.ChatSubjects(s.space),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: AckWait, DeliverPolicy: jetstream.DeliverNewPolicy,
	})
	if err != nil {
		return err
	}
	rd, err := ensureConsumer(s.ctx, s.js, wire.InboxStream(s.space), jetstream.ConsumerConfig{
		Durable: ReaderConsumer, FilterSubject: wire.InboxSubjects(s.space),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: AckWait, DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: 1000,
	})
	if err != nil {
		return err
	}
	if s.tookOver {
		// What the dead predecessor had been handed and not acked would
		// wait out its ack wait: hand it out again now. Redone copies
		// are idempotent by their ids.
		for _, c := range []struct{ stream, name string }{{wire.ChatStream(s.space), FanoutConsumer}, {wire.InboxStream(s.space), ReaderConsumer}} {
			if _, err := s.js.ResetConsumer(s.ctx, c.stream, c.name); err != nil {
				return fmt.Errorf("redelivering what %s had in flight: %w", c.name, err)
			}
		}
		s.tookOver = false
	}
	s.mu.Lock()
	s.serving = true
	for _, c := range []struct {
		cons jetstream.Consumer
		fn   func(jetstream.Msg)
	}{{fan, s.onChat}, {rd, s.onEntry}} {
		cc, err := c.cons.Consume(c.fn, jetstream.PullMaxMessages(256), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if !errors.Is(err, jetstream.ErrNoHeartbeat) {
				s.logf("delivery consumer: %v", err)
			}
		}))
		if err != nil {
			s.mu.Unlock()
			return err
		}
		s.consumes = append(s.consumes, cc)
	}
	s.mu.Unlock()
	ectx, cancel := context.WithTimeout(s.ctx, 15*time.Second)
	err = s.startEndpoint(ectx)
	cancel()
	if err != nil {
		return err
	}
	rev, err := s.leaseKV.Update(s.ctx, LeaseKey, s.leaseValue(true), s.leaseRev.Load())
	if err != nil {
		return fmt.Errorf("marking the lease ready: %w", err)
	}
	s.leaseRev.Store(rev)
	return nil
}

func (s *Service) isServing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serving
}

// Ready reports whether the service holds the lease and serves, its
// endpoint included.
func (s *Service) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serving && s.endpoint != nil
}

func (s *Service) stopServing() {
	s.mu.Lock()
	consumes, srv := s.consumes, s.endpoint
	s.consumes, s.endpoint, s.serving = nil, nil, false
	s.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
	s.closeHosts()
	for _, cc := range consumes {
		cc.Drain()
		<-cc.Closed()
	}
	s.inflight.Wait()
}

// Close stops serving, waits for in-flight copies to settle, and gives
// the lease back so a successor starts at once. The run goroutine, the only
// writer of the lease, ends first, so nothing renews or takes the lease
// again behind the delete. Close may be called more than once.
func (s *Service) Close() { s.closeOnce.Do(s.close) }

func (s *Service) close() {
	close(s.stopRun)
	<-s.done
	serving := s.isServing()
	s.stopServing()
	if rev := s.leaseRev.Load(); serving && rev != 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.leaseKV.Delete(ctx, LeaseKey, jetstream.LastRevision(rev))
		cancel()
	}
	s.cancel()
	s.roster.Close()
}

func (s *Service) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// ensureConsumer creates a durable unless it exists; an existing one is
// kept as it is, so a restart resumes where its predecessor stopped.
func ensureConsumer(ctx context.Context, js jetstream.JetStream, stream string, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	c, err := js.Consumer(ctx, stream, cfg.Durable)
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("reading consumer %s on %s: %w", cfg.Durable, stream, err)
	}
	c, err = js.CreateConsumer(ctx, stream, cfg)
	if err != nil {
		return nil, fmt.Errorf("creating consumer %s on %s: %w", cfg.Durable, stream, err)
	}
	return c, nil
}

// frontier is the CHAT stream's last sequence now.
func (s *Service) frontier(ctx context.Context) (uint64, error) {
	info, err := s.chat.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}

// aclRow reads a lifecycle's read ACL fresh.
func (s *Service) aclRow(ctx context.Context, p wire.Principal, uid string) (wire.ACLRow, bool, error) {
	ent, err := s.aclKV.Get(ctx, wire.ACLKey(p, uid))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return wire.ACLRow{}, false, nil
	}
	if err != nil {
		return wire.ACLRow{}, false, err
	}
	var row wire.ACLRow
	key := wire.ACLKey(p, uid)
	if err := json.Unmarshal(ent.Value(), &row); err != nil || !validACLRow(key, row) {
		return wire.ACLRow{}, false, fmt.Errorf("%w: the read ACL under %s is not a row the space wrote", errForeignEntry, key)
	}
	return row, true, nil
}

// warnOnce logs a problem with one key at most once a minute, so an entry
// retried every few seconds is said, not repeated.
func (s *Service) warnOnce(key, format string, args ...any) {
	s.mu.Lock()
	if s.warned == nil {
		s.warned = map[string]time.Time{}
	}
	last, seen := s.warned[key]
	if seen && time.Since(last) < time.Minute {
		s.mu.Unlock()
		return
	}
	s.warned[key] = time.Now()
	s.mu.Unlock()
	s.logf(format, args...)
}
