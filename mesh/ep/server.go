package ep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Sentinel errors of the server.
var (
	// ErrStarted is returned by Register after Start, and by a second Start.
	ErrStarted = errors.New("endpoint server already started")
	// ErrDuplicateCommand is returned by Register when the name is taken (describe is built in).
	ErrDuplicateCommand = errors.New("command already registered")
	// ErrSuperseded is returned by Start when another process moved the instance's status record during startup: it owns the instance now.
	ErrSuperseded = errors.New("instance record moved by another process")
)

// Identity is a principal with the lifecycle uid of its incarnation.
type Identity struct {
	Principal wire.Principal
	UID       string
}

// Caller is the identity as a caller triple.
func (i Identity) Caller() proto.Caller {
	return proto.Caller{Owner: i.Principal.Owner, Actor: i.Principal.Actor, UID: i.UID}
}

// ServerOptions say which endpoint instance a Server is.
type ServerOptions struct {
	Space        string
	Endpoint     string // dotted name (ai.cotal.manager) or a single label
	InstanceID   string // persisted by the caller: see LoadOrCreateInstanceID
	Identity     Identity
	EndpointType string
	URN          string // the cluster's URN; default ai.cotal.ep.<endpoint>
	Revision     int    // the cluster's revision; default 1

	// Private makes describe answers non-public: each is intersected with View, and without a View every describe is refused unavailable.
	Private bool
	View    func(ctx context.Context, caller proto.Caller) (visible func(command string) bool, err error)

	MaxInFlight int // concurrent handlers; default 256, beyond it calls are refused resource-exhausted
	// MaxPerCaller bounds the handlers one caller principal (all its
	// lifecycles) may hold at once, so one identity cannot take every slot
	// from the others; default an eighth of MaxInFlight, at least 8.
	MaxPerCaller int
	Logf         func(format string, args ...any)
}

// Handler runs one admitted request. A nil error with a value is the reply's data; an *Error without an outcome is read as executed.
type Handler func(ctx context.Context, c *Call) (any, *proto.Error)

// Command is one registered command.
type Command struct {
	Name       string
	Class      string          // ephemeral (default) or journal
	Modes      []proto.Mode    // the authorization modes the command is served under; default untargeted only
	Input      json.RawMessage // JSON Schema 2020-12, closed; empty is void
	Output     json.RawMessage // likewise
	Capability string
	Traits     []string

	// Authorize runs after the mode check and before args validation; its refusal is not-executed.
	Authorize func(ctx context.Context, c *Call) *proto.Error
	// Target checks a targeted request's target is current (stale actor or uid: expired). child and ledger requests without one are refused unavailable.
	Target func(ctx context.Context, c *Call) *proto.Error

	Handler Handler
}

type command struct {
	Command
	in, out *proto.Schema
	modes   map[proto.Mode]bool
}

// Server serves one endpoint instance on the three rails. mu guards cmds, subs and the record revisions; epoch is fixed once Start returns.
type Server struct {
	nc        *nats.Conn
	js        jetstream.JetStream
	opts      ServerOptions
	token     string
	contracts *ContractStore

	mu        sync.Mutex
	cmds      map[string]*command
	order     []string
	subs      []*nats.Subscription
	started   bool
	closed    bool
	kv        jetstream.KeyValue
	epoch     atomic.Uint64 // written once by Start before any subscription exists
	specRev   uint64
	statusRev uint64
	clusters  []proto.ClusterRef
	clusterD  proto.ClusterDocument

	fenced   atomic.Bool  // a later epoch took the instance, or Close began: nothing more is published
	gate     sync.RWMutex // held for reading while a request joins inflight, for writing while Close shuts the door
	draining bool         // under gate: no new request joins inflight
	sem      chan struct{}
	perMu    sync.Mutex
	per      map[string]int // caller principal -> its handlers running; under perMu
	inflight sync.WaitGroup
	jobs     chan job // unbuffered: a send succeeds only into an idle worker's hands
	ctx      context.Context
	cancel   context.CancelFunc
	watchers sync.WaitGroup
}

// NewServer prepares a server; nothing is written or subscribed until Start.
func NewServer(nc *nats.Conn, opts ServerOptions) (*Server, error) {
	if err := wire.ValidSpace(opts.Space); err != nil {
		return nil, err
	}
	tok, err := proto.EndpointToken(opts.Endpoint)
	if err != nil {
		return nil, err
	}
	if !proto.ValidID(opts.InstanceID) {
		return nil, fmt.Errorf("ep: instance id %q must be 1-64 of A-Z a-z 0-9 _ -", opts.InstanceID)
	}
	if err := opts.Identity.Caller().Valid(); err != nil {
		return nil, fmt.Errorf("ep: server identity: %w", err)
	}
	if opts.URN == "" {
		opts.URN = "ai.cotal.ep." + proto.EndpointName(tok)
	}
	if opts.Revision == 0 {
		opts.Revision = 1
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 256
	}
	if opts.MaxPerCaller <= 0 {
		opts.MaxPerCaller = max(opts.MaxInFlight/8, 8)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	store, err := NewContractStore(nc, opts.Space)
	if err != nil {
		return nil, err
	}
	s := &Server{nc: nc, js: js, opts: opts, token: tok, contracts: store, cmds: map[string]*command{}, sem: make(chan struct{}, opts.MaxInFlight), jobs: make(chan job), per: map[string]int{}}
	store.logf = s.logf
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if err := s.register(describeCommand(s), true); err != nil {
		return nil, err
	}
	return s, nil
}

// Register adds a command; it must come before Start. Schemas are compiled here, so a bad one fails now.
func (s *Server) Register(c Command) error { return s.register(c, false) }

func (s *Server) register(c Command, builtin bool) error {
	if !proto.ValidCommand(c.Name) {
		return fmt.Errorf("ep: command %q must be 1-32 of a-z 0-9 -", c.Name)
	}
	if !builtin && c.Name == proto.CommandDescribe {
		return fmt.Errorf("ep: %w: describe is built in", ErrDuplicateCommand)
	}
	if c.Handler == nil {
		return fmt.Errorf("ep: command %q has no handler", c.Name)
	}
	if c.Class == "" {
		c.Class = proto.ClassEphemeral
	}
	if c.Class != proto.ClassEphemeral && c.Class != proto.ClassJournal {
		return fmt.Errorf("ep: command %q class %q must be ephemeral or journal", c.Name, c.Class)
	}
	if len(c.Modes) == 0 {
		c.Modes = []proto.Mode{proto.ModeNone}
	}
	cmd := &command{Command: c, modes: map[proto.Mode]bool{}}
	for _, m := range c.Modes {
		if m != proto.ModeNone && !proto.IsModeWord(string(m)) {
			return fmt.Errorf("ep: command %q mode %q is not a mode", c.Name, m)
		}
		cmd.modes[m] = true
	}
	var err error
	if cmd.in, err = proto.CompileSchema(c.Input); err != nil {
		return fmt.Errorf("ep: command %q input: %w", c.Name, err)
	}
	if cmd.out, err = proto.CompileSchema(c.Output); err != nil {
		return fmt.Errorf("ep: command %q output: %w", c.Name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return ErrStarted
	}
	if _, dup := s.cmds[c.Name]; dup {
		return fmt.Errorf("ep: %w: %s", ErrDuplicateCommand, c.Name)
	}
	s.cmds[c.Name] = cmd
	s.order = append(s.order, c.Name)
	return nil
}

// Epoch is the epoch Start committed; zero before.
func (s *Server) Epoch() uint64 { return s.epoch.Load() }

// RegistrationRevision is the store revision of this start's svc spec.
func (s *Server) RegistrationRevision() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.specRev
}

// Serving reports whether the server still publishes: false once fenced by a later epoch or closed.
func (s *Server) Serving() bool { return !s.fenced.Load() }

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// Start publishes the contracts, writes the svc spec, CAS-increments the epoch in the status record (state ready), and only then subscribes the rails.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return ErrStarted
	}
	if err := s.publishContracts(ctx); err != nil {
		return err
	}
	kv, err := s.js.KeyValue(ctx, wire.RecordsBucket(s.opts.Space))
	if err != nil {
		return fmt.Errorf("ep: opening the records bucket of %s: %w", s.opts.Space, err)
	}
	s.kv = kv
	if err := s.register0(ctx); err != nil {
		return err
	}
	for _, name := range s.order {
		if err := s.subscribe(s.cmds[name]); err != nil {
			s.unsubscribe()
			return err
		}
	}
	if err := s.nc.FlushWithContext(ctx); err != nil {
		s.unsubscribe()
		return fmt.Errorf("ep: confirming subscriptions: %w", err)
	}
	if err := s.watchStatus(); err != nil {
		s.unsubscribe()
		return err
	}
	s.started = true
	s.logf("serving %s instance %s at epoch %d", s.opts.Endpoint, s.opts.InstanceID, s.Epoch())
	return nil
}

func (s *Server) publishContracts(ctx context.Context) error {
	doc := proto.ClusterDocument{URN: s.opts.URN, Revision: s.opts.Revision, Attributes: []json.RawMessage{}, Events: []json.RawMessage{}}
	var schemas []*proto.Schema
	for _, name := range s.order {
		c := s.cmds[name]
		schemas = append(schemas, c.in, c.out)
	}
	if err := publishSchemas(ctx, s.contracts, schemas); err != nil {
		return err
	}
	for _, name := range s.order {
		c := s.cmds[name]
		targeted := false
		modes := make([]proto.Mode, 0, len(c.Modes))
		for _, m := range c.Modes {
			targeted = targeted || m.Targeted()
			modes = append(modes, m)
		}
		doc.Commands = append(doc.Commands, proto.CommandInfo{
			Name: name, Class: c.Class, Targeted: targeted, Modes: modes, Capability: c.Capability,
			InputDigest: c.in.Digest(), OutputDigest: c.out.Digest(), Traits: c.Traits,
		})
	}
	d, err := publishCluster(ctx, s.contracts, doc, schemas)
	if err != nil {
		return fmt.Errorf("ep: publishing the cluster: %w", err)
	}
	s.clusterD = doc
	s.clusters = []proto.ClusterRef{{Digest: d, Commands: append([]string(nil), s.order...), Document: &s.clusterD}}
	return nil
}

// register0 writes the spec, then moves the status to epoch+1 by CAS; a lost race means another process holds the instance.
func (s *Server) register0(ctx context.Context) error {
	specKey, _ := SvcKey(s.opts.Endpoint, s.opts.InstanceID, "spec")
	statusKey, _ := SvcKey(s.opts.Endpoint, s.opts.InstanceID, "status")
	var prev SvcStatus
	var prevRev uint64
	e, err := s.kv.Get(ctx, statusKey)
	switch {
	case err == nil:
		if err := json.Unmarshal(e.Value(), &prev); err != nil {
			return fmt.Errorf("ep: %s is unreadable (%v); refusing to guess the epoch", statusKey, err)
		}
		prevRev = e.Revision()
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
	default:
		return fmt.Errorf("ep: reading %s: %w", statusKey, err)
	}
	spec := SvcSpec{Endpoint: proto.EndpointName(s.token), Owner: s.opts.Identity.Principal.ID(), EndpointType: s.opts.EndpointType,
		ClusterDigests: []string{s.clusters[0].Digest}, Protocol: proto.Protocol{V: proto.Version}}
	b, _ := json.Marshal(spec)
	specRev, err := s.kv.Put(ctx, specKey, b)
	if err != nil {
		return fmt.Errorf("ep: writing %s: %w", specKey, err)
	}
	next := SvcStatus{Epoch: prev.Epoch + 1, State: StateReady, ObservedSpecRevision: specRev}
	b, _ = json.Marshal(next)
	var rev uint64
	if prevRev == 0 {
		rev, err = s.kv.Create(ctx, statusKey, b)
	} else {
		rev, err = s.kv.Update(ctx, statusKey, b, prevRev)
	}
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) || isWrongSeq(err) {
			return fmt.Errorf("ep: %w: %s changed while epoch %d was being taken", ErrSuperseded, statusKey, next.Epoch)
		}
		return fmt.Errorf("ep: writing %s: %w", statusKey, err)
	}
	s.epoch.Store(next.Epoch)
	s.specRev, s.statusRev = specRev, rev
	return nil
}

func isWrongSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
}

// subscribe takes the three rails of one command: one as a queue member only, all, and this instance's inst rail.
func (s *Server) subscribe(c *command) error {
	one, all, inst := proto.ServeSubjects(s.opts.Space, s.opts.Endpoint, s.opts.InstanceID, c.Name)
	h := func(m *nats.Msg) { s.dispatch(m, c) }
	sub, err := s.nc.QueueSubscribe(one, proto.QueueGroup(s.opts.Endpoint), h)
	if err != nil {
		return fmt.Errorf("ep: subscribing %s: %w", one, err)
	}
	s.subs = append(s.subs, sub)
	for _, subj := range []string{all, inst} {
		sub, err := s.nc.Subscribe(subj, h)
		if err != nil {
			return fmt.Errorf("ep: subscribing %s: %w", subj, err)
		}
		s.subs = append(s.subs, sub)
	}
	return nil
}

func (s *Server) unsubscribe() {
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
	s.subs = nil
}

// watchStatus fences the server the moment its status record shows a later epoch: only the current epoch serves.
func (s *Server) watchStatus() error {
	statusKey, _ := SvcKey(s.opts.Endpoint, s.opts.InstanceID, "status")
	w, err := s.kv.Watch(s.ctx, statusKey, jetstream.UpdatesOnly())
	if err != nil {
		return fmt.Errorf("ep: watching %s: %w", statusKey, err)
	}
	mine := s.Epoch()
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		defer w.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil || e.Operation() != jetstream.KeyValuePut {
					continue
				}
				var st SvcStatus
				if json.Unmarshal(e.Value(), &st) == nil && st.Epoch > mine {
					s.fence(fmt.Sprintf("epoch %d took instance %s", st.Epoch, s.opts.InstanceID))
				}
			}
		}
	}()
	return nil
}

// fence stops all egress and drops the subscriptions; in-flight handlers finish but publish nothing.
func (s *Server) fence(why string) {
	if s.fenced.Swap(true) {
		return
	}
	s.logf("%s instance %s epoch %d stops serving: %s", s.opts.Endpoint, s.opts.InstanceID, s.Epoch(), why)
	s.mu.Lock()
	s.unsubscribe()
	s.mu.Unlock()
}

// Close stops serving, waits for in-flight handlers, and deregisters only if the records still carry this start's revisions: a successor's records are never touched.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	started := s.started
	s.mu.Unlock()
	superseded := s.fenced.Swap(true)
	s.mu.Lock()
	s.unsubscribe()
	s.mu.Unlock()
	s.gate.Lock()
	s.draining = true
	s.gate.Unlock()
	s.cancel()
	s.inflight.Wait()
	s.watchers.Wait()
	if !started || superseded {
		return nil
	}
	return s.deregister()
}

// deregister marks the status exited (keeping the epoch, so the next start still moves past it) and deletes the spec, each pinned to the revision this start wrote.
func (s *Server) deregister() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	specKey, _ := SvcKey(s.opts.Endpoint, s.opts.InstanceID, "spec")
	statusKey, _ := SvcKey(s.opts.Endpoint, s.opts.InstanceID, "status")
	b, _ := json.Marshal(SvcStatus{Epoch: s.Epoch(), State: StateExited, ObservedSpecRevision: s.specRev})
	if _, err := s.kv.Update(ctx, statusKey, b, s.statusRev); err != nil {
		if isWrongSeq(err) {
			s.logf("not deregistering %s: its status moved since epoch %d", s.opts.InstanceID, s.Epoch())
			return nil
		}
		return fmt.Errorf("ep: marking %s exited: %w", statusKey, err)
	}
	if err := s.kv.Delete(ctx, specKey, jetstream.LastRevision(s.specRev)); err != nil {
		if isWrongSeq(err) {
			s.logf("not deregistering %s: its spec moved since revision %d", s.opts.InstanceID, s.specRev)
			return nil
		}
		return fmt.Errorf("ep: deleting %s: %w", specKey, err)
	}
	return nil
}

// WarmSchemas compiles the contracts of cmds (and of describe, which
// every server has) into the process's schema cache, so a server that
// registers them later finds them compiled. A host calls it beside work
// that waits on the broker, taking the compiles off its start's path.
func WarmSchemas(cmds []Command) {
	_, _ = proto.CompileSchema(json.RawMessage(describeOutput))
	for _, c := range cmds {
		_, _ = proto.CompileSchema(c.Input)
		_, _ = proto.CompileSchema(c.Output)
	}
}
