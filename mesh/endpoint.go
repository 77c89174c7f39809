// Package mesh is the Cotal messaging contract as a Go client library: an
// Endpoint connects one identity to a space, keeps its presence, receives
// its DMs, anycast tasks and channel posts, and sends as it. It never
// imports seat/, tui/, broker/ or the host: the same code serves a CLI
// command, a seat connector, an MCP server and the dashboard. It hands out
// values, not text: mesh/render turns them into lines for people and models.
//
// An endpoint reaches storage in one of two ways. A trusted connection (the
// operator's, an open mesh's, or an in-process one acting for a seat or an
// agent through Options.Act) reads JetStream itself. An agent's or
// observer's credential has no JetStream right at all, so such an endpoint
// is mediated: it reads everything stored for it through the delivery
// endpoint (agentsvc.go), and only publishes and live channel reads go
// straight to the broker.
package mesh

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/internal/violation"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Sentinel errors of the endpoint.
var (
	// ErrNotAllowed is returned when the broker refused a publish or a
	// subscription under the credential's ACL.
	ErrNotAllowed = errors.New("not allowed")
	// ErrNoPeer is returned when a DM target names nobody in the space.
	ErrNoPeer = errors.New("no such peer")
	// ErrAmbiguous is returned when a DM target name fits several peers.
	ErrAmbiguous = errors.New("ambiguous peer name")
	// ErrUnverifiable is returned when the presence view is not current,
	// so a name cannot be checked.
	ErrUnverifiable = errors.New("presence view not current")
	// ErrNoDefaultChannel is returned by Send without a channel when the
	// endpoint has joined no concrete channel.
	ErrNoDefaultChannel = errors.New("no default channel")
	// ErrClosed is returned by calls on a closed endpoint.
	ErrClosed = errors.New("endpoint closed")
)

// Options say how and as whom to connect.
type Options struct {
	URL   string     // the mesh's nats:// URL; ignored when Conn is set
	Creds string     // creds file; empty means open mode
	Conn  *nats.Conn // an existing connection (in-process); the endpoint does not close it
	// TLS, when set, is how the server at URL is verified (a pin or a CA,
	// config.TLSTrust): every connection is then TLS, and one to a server
	// it refuses fails in the handshake, before the credential is sent.
	TLS *tls.Config

	// Open mode identity (with creds these come from the file; a Name
	// that disagrees with the creds is refused).
	Space        string
	Name         string
	LifecycleUID string

	Role        string
	Kind        string // agent (default) or endpoint
	Description string
	Tags        []string
	// Meta is the presence card's meta (presence.MetaManager and the like).
	Meta map[string]string

	// Subscribe overrides the channels joined at connect (default: the
	// creds' subscribe list).
	Subscribe []string

	// OneShot endpoints (CLI commands) write no presence and consume
	// nothing until asked: see Collect.
	OneShot bool

	// Offline endpoints consume but write no presence until GoOnline: a
	// seat's connector before its seat is ready.
	Offline bool

	// Echoes hands over live channel posts of this endpoint's own
	// principal instead of dropping them as its echo. The operator's
	// identity is shared by every CLI command and dashboard, so a
	// dashboard sets it to show the operator's posts made elsewhere; it
	// then sees its own posts too, and tells them apart by id.
	Echoes bool

	// Returning says this lifecycle read its channels here before (a seat
	// taken back from its keeper, or resumed after `down
	// --preserve-state`): its joins backfill no history, since what it
	// has not read yet comes as stored copies of its durable holds.
	Returning bool

	// DMFrom is, in an open mesh, the DM stream sequence a DM consumer
	// this lifecycle finds gone is made again from (a resumed seat: the
	// one after its cut, since an open mesh's DM consumers expire after
	// 10 minutes unread); 0 makes it from now, as for a new lifecycle.
	DMFrom uint64

	// Act names the identity a trusted connection (Conn) acts for: a
	// seat's connector in the manager, an agent's host in the delivery
	// service. The broker does not restrict such a connection, so the
	// endpoint enforces Act's lists itself.
	Act *Identity

	// Redial names the address each (re)connect dials, for a client that
	// follows a mesh which may come back elsewhere (a dashboard reading
	// broker.json); "" or nil dials URL.
	Redial func() string

	// Logf receives warnings worth a person's attention; nil discards.
	Logf func(format string, args ...any)
}

// Identity is who an endpoint acting on a trusted connection is: what a
// credential would otherwise carry.
type Identity struct {
	Principal      wire.Principal
	UID            string
	Role           string
	Profile        wire.Profile // agent (default), observer, operator, or open (an open mesh: no lists)
	Subscribe      []string     // joined at connect unless Options.Subscribe says otherwise
	AllowSubscribe wire.ACL     // an agent's read ACL; nil reads nothing
	AllowPublish   wire.ACL     // an agent's post ACL; nil posts nothing
}

// Endpoint is one connected identity. Its methods are safe for concurrent
// use. Lock order: mu, then the inbox's mu.
type Endpoint struct {
	opts     Options
	nc       *nats.Conn
	ownNC    bool
	js       jetstream.JetStream
	mediated bool // reads storage through the delivery endpoint (agentsvc.go)
	remote   remoteState

	space   string
	me      wire.Principal
	uid     string
	role    string
	profile wire.Profile
	card    presence.Card

	allowSubscribe wire.ACL // what it may read; wire.Every for the unlisted profiles (listsOf)
	allowPublish   wire.ACL // what it may post; none for an observer

	presenceKV jetstream.KeyValue
	writer     *presence.Writer
	watchOnce  sync.Once // starts the watcher (roster); watchErr is its outcome
	watchErr   error

	conn      connWatch // when this endpoint's own connection drops (unconfirmed.go)
	inbox     *inbox
	window    windowState  // inbox reads for a model (window.go)
	modes     channelModes // per-channel attention overrides (attention.go)
	perms     *violation.Tracker
	stored    storedNotices // the stored notices of what it publishes
	bootJoins []JoinResult  // the subscribe list, joined at connect

	mu       sync.Mutex
	watcher  *presence.Watcher    // set once by the first roster read, unless closed first
	joined   []*joinedChannel     // in join order: the first concrete one is the default send channel
	echoSubs []*nats.Subscription // EchoDirect's
	dm, svc  jetstream.Consumer
	dlv      jetstream.Consumer // durable channel copies; nil when none was provisioned
	consumes []jetstream.ConsumeContext
	closed   bool

	ctx    context.Context
	cancel context.CancelFunc
}

// Connect connects an identity to its space, binds its DM and role queues,
// joins its subscribe list and starts its presence.
func Connect(ctx context.Context, opts Options) (*Endpoint, error) {
	e := &Endpoint{opts: opts, perms: violation.New()}
	e.inbox = newInbox()
	if err := e.identify(); err != nil {
		return nil, err
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	if err := e.dial(); err != nil {
		e.cancel()
		return nil, err
	}
	if err := e.bind(ctx); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// identify works out who this endpoint is: from the creds file, or from
// the options in open mode.
func (e *Endpoint) identify() error {
	o := e.opts
	e.role = strings.ToLower(o.Role)
	if o.Act != nil {
		if o.Conn == nil {
			return errors.New("acting for an identity needs a trusted connection (Options.Conn)")
		}
		a := o.Act
		e.me, e.uid, e.profile, e.space = a.Principal, a.UID, a.Profile, o.Space
		if e.profile == "" {
			e.profile = wire.ProfileAgent
		}
		if a.Role != "" {
			e.role = strings.ToLower(a.Role)
		}
		switch e.profile {
		case wire.ProfileAgent, wire.ProfileOpen, wire.ProfileOperator, wire.ProfileObserver:
			e.allowSubscribe, e.allowPublish = listsOf(e.profile, a.AllowSubscribe, a.AllowPublish)
		default:
			return fmt.Errorf("unknown profile %q to act as", e.profile)
		}
		if e.opts.Subscribe == nil {
			e.opts.Subscribe = a.Subscribe
		}
	} else if o.Creds != "" {
		b, err := os.ReadFile(o.Creds)
		if err != nil {
			return fmt.Errorf("reading creds: %w", err)
		}
		info, err := wire.ParseCreds(b)
		if err != nil {
			return fmt.Errorf("%s: %w", o.Creds, err)
		}
		if o.Name != "" && o.Name != info.Principal.Actor {
			return fmt.Errorf("name %q conflicts with the creds, which are for %s", o.Name, info.Principal)
		}
		if o.Space != "" && info.Space != "" && o.Space != info.Space {
			return fmt.Errorf("space %q conflicts with the creds, which are for space %q", o.Space, info.Space)
		}
		e.me, e.uid, e.profile = info.Principal, info.UID, info.Profile
		e.space = info.Space
		if e.space == "" {
			e.space = o.Space
		}
		if info.Role != "" {
			e.role = info.Role
		}
		e.allowSubscribe, e.allowPublish = listsOf(info.Profile, info.AllowSubscribe, info.AllowPublish)
		if e.opts.Subscribe == nil {
			e.opts.Subscribe = info.Subscribe
		}
		// An agent's or observer's credential reads nothing from storage:
		// the delivery endpoint reads for it.
		e.mediated = info.Profile.Mediated()
	} else {
		e.space, e.profile = o.Space, wire.ProfileOpen
		e.allowSubscribe, e.allowPublish = listsOf(e.profile, nil, nil)
		e.me = wire.Principal{Owner: "local", Actor: o.Name}
		e.uid = o.LifecycleUID
		if e.uid == "" {
			e.uid = wire.NewLifecycleUID()
		}
	}
	if !e.mediated {
		e.inbox.noter = e.noter
	}
	if err := wire.ValidSpace(e.space); err != nil {
		return err
	}
	if err := e.me.Valid(); err != nil {
		return err
	}
	if !wire.ValidLifecycleUID(e.uid) {
		return fmt.Errorf("lifecycle uid %q is not 26-32 characters of [a-z0-9]", e.uid)
	}
	if e.role != "" && !wire.ValidToken(e.role) {
		return fmt.Errorf("role %q must be one token of a-z 0-9 _", e.role)
	}
	for _, ch := range e.opts.Subscribe {
		if err := wire.ValidateChannel(ch); err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
	}
	kind := o.Kind
	if kind == "" {
		kind = "agent"
	}
	e.card = presence.Card{
		ID: e.me.ID(), Name: e.me.Actor, Kind: kind, Owner: e.me.Owner, Actor: e.me.Actor,
		Role: e.role, Description: o.Description, Tags: o.Tags, Meta: maps.Clone(o.Meta), ProtocolVersion: presence.ProtocolVersion,
	}
	return nil
}

// listsOf is what an identity of a profile may read and post, as its
// credential's permissions say (broker.Identity.Permissions): an agent
// its own lists, an observer every channel and no post, an operator and
// an open mesh's participant everything.
func listsOf(p wire.Profile, read, post wire.ACL) (wire.ACL, wire.ACL) {
	switch p {
	case wire.ProfileAgent:
		return read.Listed(), post.Listed()
	case wire.ProfileObserver:
		return wire.Every(), wire.ACL{}
	}
	return wire.Every(), wire.Every()
}

func (e *Endpoint) dial() error {
	var err error
	if e.opts.Conn != nil {
		e.nc = e.opts.Conn
	} else {
		nopts := []nats.Option{
			nats.Name("cotal " + e.me.ID()),
			nats.CustomInboxPrefix(wire.ReplyInbox(e.me, e.uid)),
			nats.ErrorHandler(e.onAsyncError),
			nats.MaxReconnects(-1),
			nats.ReconnectWait(250 * time.Millisecond),
			nats.DisconnectErrHandler(func(*nats.Conn, error) { e.conn.dropped() }),
			nats.ReconnectHandler(func(*nats.Conn) { e.conn.restored() }),
			nats.Timeout(5 * time.Second),
		}
		if e.opts.Creds != "" {
			nopts = append(nopts, nats.UserCredentials(e.opts.Creds))
		}
		if e.opts.TLS != nil {
			nopts = append(nopts, nats.Secure(e.opts.TLS))
		}
		if e.opts.Redial != nil {
			nopts = append(nopts, nats.SetCustomDialer(redialer(e.opts.Redial)))
		}
		e.nc, err = nats.Connect(e.opts.URL, nopts...)
		if err != nil {
			return fmt.Errorf("connecting to %s as %s: %w", e.opts.URL, e.me, err)
		}
		e.ownNC = true
	}
	e.js, err = jetstream.New(e.nc)
	return err
}

// onAsyncError routes the broker's permission refusals to whoever waits
// for them: a publish that would otherwise wait for an ack until its
// context ends, a join being confirmed, a joined channel refused late.
func (e *Endpoint) onAsyncError(_ *nats.Conn, _ *nats.Subscription, err error) {
	if subj, op, ok := e.perms.Record(err); ok {
		if op == violation.Subscription {
			e.dropRefusedChannel(subj)
		}
		return
	}
	e.logf("connection error: %v", err)
}

// bind opens the presence bucket, binds the DM and role durables and joins
// the boot channels, then starts presence. A mediated endpoint asks the
// delivery endpoint instead of opening anything.
func (e *Endpoint) bind(ctx context.Context) error {
	if e.mediated {
		return e.bindRemote(ctx)
	}
	kv, err := e.js.KeyValue(ctx, wire.PresenceBucket(e.space))
	if err != nil {
		return fmt.Errorf("opening presence of space %s: %w (is the mesh for %s up?)", e.space, err, e.space)
	}
	e.presenceKV = kv
	if e.profile != wire.ProfileObserver {
		if err := e.bindDurables(ctx); err != nil {
			return err
		}
	}
	for _, ch := range e.opts.Subscribe {
		r, err := e.Join(ctx, ch)
		if err != nil {
			return err
		}
		e.bootJoins = append(e.bootJoins, r)
	}
	if e.opts.OneShot {
		return nil
	}
	if err := e.startConsuming(); err != nil {
		return err
	}
	if e.opts.Offline {
		return nil
	}
	return e.GoOnline(ctx)
}

// GoOnline starts writing this endpoint's presence if it does not yet: an
// endpoint opened OneShot that is now heard from (a mediated agent's host
// in the delivery service). The first write must succeed.
func (e *Endpoint) GoOnline(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.writer != nil || e.presenceKV == nil {
		return nil
	}
	w := presence.NewWriter(e.presenceKV, e.card, e.uid, presence.OnStuck(func(err error) {
		e.logf("presence-write-stuck: %v", err)
	}))
	// Channel modes set while offline (a seat's starting modes) are in
	// the first record.
	if modes := e.ChannelModes(); len(modes) > 0 {
		mirror := make(map[string]string, len(modes))
		for ch, m := range modes {
			mirror[ch] = string(m)
		}
		_ = w.SetChannelModes(mirror)
	}
	if err := w.Start(e.ctx); err != nil {
		return err
	}
	e.writer = w
	return nil
}

func (e *Endpoint) presenceWriter() *presence.Writer {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.writer
}

// GoOffline writes the final offline record and stops writing presence;
// GoOnline may start it again.
func (e *Endpoint) GoOffline(ctx context.Context) error {
	e.mu.Lock()
	w := e.writer
	e.writer = nil
	e.mu.Unlock()
	if w == nil {
		return nil
	}
	return w.Close(ctx)
}

// SetCard changes the descriptive fields of the presence card before the
// endpoint goes online (kind agent or endpoint, description, tags).
func (e *Endpoint) SetCard(kind, description string, tags []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if kind != "" {
		e.card.Kind = kind
	}
	if description != "" {
		e.card.Description = description
	}
	if tags != nil {
		e.card.Tags = tags
	}
}

// bindDurables binds the pre-created DM durable (auth) or creates it (open
// mode, where nobody pre-creates), and the role's shared queue.
func (e *Endpoint) bindDurables(ctx context.Context) error {
	name := wire.DMConsumer(e.me, e.uid)
	dm, err := e.js.Consumer(ctx, wire.DMStream(e.space), name)
	if errors.Is(err, jetstream.ErrConsumerNotFound) && e.profile == wire.ProfileOpen {
		dm, err = e.createOpenDM(ctx, name)
	}
	if err != nil {
		return fmt.Errorf("binding DM inbox %s: %w", name, err)
	}
	e.dm = dm
	// The backstop durable exists only where the space provisioned it.
	if dlv, err := e.js.Consumer(ctx, wire.DlvStream(e.space), wire.DlvConsumer(e.me, e.uid)); err == nil {
		e.dlv = dlv
	}
	if e.role == "" {
		return nil
	}
	svcName := wire.SvcConsumer(e.role)
	svc, err := e.js.Consumer(ctx, wire.TaskStream(e.space), svcName)
	if errors.Is(err, jetstream.ErrConsumerNotFound) && e.profile != wire.ProfileAgent {
		svc, err = e.js.CreateOrUpdateConsumer(ctx, wire.TaskStream(e.space), jetstream.ConsumerConfig{
			Durable: svcName, FilterSubject: wire.SvcFilter(e.space, e.role),
			AckPolicy: jetstream.AckExplicitPolicy, AckWait: AckWait, DeliverPolicy: jetstream.DeliverAllPolicy,
		})
	}
	if err != nil {
		return fmt.Errorf("binding role queue %s: %w", svcName, err)
	}
	e.svc = svc
	return nil
}

// AckWait is how long a delivered DM or task waits for its ack before the
// broker redelivers it.
const AckWait = 60 * time.Second

func (e *Endpoint) createOpenDM(ctx context.Context, name string) (jetstream.Consumer, error) {
	st, err := e.js.Stream(ctx, wire.DMStream(e.space))
	if err != nil {
		return nil, err
	}
	from := st.CachedInfo().State.LastSeq + 1
	if e.opts.DMFrom > 0 && e.opts.DMFrom < from {
		from = e.opts.DMFrom
	}
	return e.js.CreateOrUpdateConsumer(ctx, wire.DMStream(e.space), jetstream.ConsumerConfig{
		Durable: name, FilterSubject: wire.DMFilter(e.space, e.me),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: AckWait,
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from,
		InactiveThreshold: 10 * time.Minute,
	})
}

// Consume starts handing every stored item to the inbox as it arrives, for
// an endpoint opened OneShot that is now in use for a while (a mediated
// agent's host while the agent heartbeats). It is a no-op when consuming.
func (e *Endpoint) Consume() error { return e.startConsuming() }

// StopConsuming stops taking stored items and gives back what was queued
// but not handed over, so another reader gets it at once.
func (e *Endpoint) StopConsuming() {
	e.mu.Lock()
	consumes := e.consumes
	e.consumes = nil
	e.mu.Unlock()
	for _, cc := range consumes {
		cc.Stop()
	}
	for _, it := range e.inbox.drain() {
		_ = it.Release()
	}
}

func (e *Endpoint) consuming() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.consumes) > 0
}

// startConsuming hands every DM and task to the inbox as it arrives.
func (e *Endpoint) startConsuming() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.consumes) > 0 {
		return nil
	}
	for _, c := range []jetstream.Consumer{e.dm, e.svc, e.dlv} {
		if c == nil {
			continue
		}
		handler := e.onDurable
		if c == e.dlv {
			handler = e.onFrame
		}
		cc, err := c.Consume(handler, jetstream.PullMaxMessages(64), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if !errors.Is(err, jetstream.ErrNoHeartbeat) {
				e.logf("consuming %s: %v", c.CachedInfo().Name, err)
			}
		}))
		if err != nil {
			return fmt.Errorf("consuming %s: %w", c.CachedInfo().Name, err)
		}
		e.consumes = append(e.consumes, cc)
	}
	return nil
}

// BootJoins says how each channel of the subscribe list was joined.
func (e *Endpoint) BootJoins() []JoinResult { return e.bootJoins }

// Me is this endpoint's principal.
func (e *Endpoint) Me() wire.Principal { return e.me }

// LifecycleUID names this incarnation of the principal.
func (e *Endpoint) LifecycleUID() string { return e.uid }

// Space is the space the endpoint is connected to.
func (e *Endpoint) Space() string { return e.space }

// Role is the anycast role this endpoint serves, "" for none.
func (e *Endpoint) Role() string { return e.role }

// Card is the endpoint's presence card.
func (e *Endpoint) Card() presence.Card { return e.card }

// Conn is the underlying connection.
func (e *Endpoint) Conn() *nats.Conn { return e.nc }

// SetStatus publishes a status and activity at once.
func (e *Endpoint) SetStatus(status presence.Status, activity string) error {
	if e.mediated {
		return e.remotePresence(PresenceArgs{Status: string(status), Activity: &activity})
	}
	w := e.presenceWriter()
	if w == nil {
		return errors.New("this endpoint writes no presence")
	}
	return w.Set(status, activity)
}

// SetAttention publishes an attention mode.
func (e *Endpoint) SetAttention(a presence.Attention) error {
	if e.mediated {
		return e.remotePresence(PresenceArgs{Attention: string(a)})
	}
	w := e.presenceWriter()
	if w == nil {
		return errors.New("this endpoint writes no presence")
	}
	return w.SetAttention(a)
}

// SetCondition publishes why the peer is not making progress (what it
// waits on), or clears it with nil. Only an endpoint writing its own
// presence has one.
func (e *Endpoint) SetCondition(c *presence.Condition) error {
	w := e.presenceWriter()
	if w == nil {
		return errors.New("this endpoint writes no presence")
	}
	return w.SetCondition(c)
}

// Close stops consuming, writes one final offline presence record and
// closes the connection if the endpoint opened it.
func (e *Endpoint) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	consumes := e.consumes
	e.consumes = nil
	joined := e.joined
	e.joined = nil
	echoes := e.echoSubs
	e.echoSubs = nil
	watcher := e.watcher
	e.mu.Unlock()
	for _, sub := range echoes {
		_ = sub.Unsubscribe()
	}
	e.stored.close()
	for _, cc := range consumes {
		cc.Stop()
	}
	for _, j := range joined {
		if j.sub != nil {
			_ = j.sub.Unsubscribe()
		}
	}
	var err error
	if w := e.presenceWriter(); w != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err = w.Close(ctx)
		cancel()
	}
	if e.mediated {
		err = e.closeRemote()
	}
	if watcher != nil {
		watcher.Close()
	}
	if e.cancel != nil {
		e.cancel()
	}
	// What was queued but never handed over goes back at once, rather
	// than after the ack wait.
	for _, it := range e.inbox.close() {
		if it.msg != nil {
			_ = it.msg.Nak()
		}
	}
	if e.ownNC && e.nc != nil {
		e.nc.Close()
	}
	return err
}

func (e *Endpoint) logf(format string, args ...any) {
	if e.opts.Logf != nil {
		e.opts.Logf(format, args...)
	}
}

// PresenceRecord is the record this endpoint last wrote, when it writes one.
func (e *Endpoint) PresenceRecord() (presence.Record, bool) {
	if e.mediated {
		return e.remote.record()
	}
	w := e.presenceWriter()
	if w == nil {
		return presence.Record{}, false
	}
	return w.Record(), true
}
