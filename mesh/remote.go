package mesh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Timings of a mediated endpoint.
const (
	takeWait       = 10 * time.Second // one long poll for stored items
	takeBatch      = 64
	roomPoll       = 250 * time.Millisecond // how often a full inbox is looked at again
	remoteBeat     = presence.Heartbeat     // how often a mediated endpoint says it is alive
	serviceBackoff = 5 * time.Second        // the longest wait between tries when the service is away
)

// remoteState is what a mediated endpoint keeps of the service's answers.
// mu guards it.
type remoteState struct {
	once   sync.Once
	client *ep.Client
	err    error

	session string // names this process's reader to the service; "" for a one-shot

	mu        sync.Mutex
	described bool // the delivery endpoint answered a describe
	rec       presence.Record
	hasRec    bool
	roster    *remoteRoster
	stopped   chan struct{} // closed when the pump and heartbeat have ended
	// pending are the taken items not settled yet, by message id.
	pending map[string]*remoteHandle
}

// remoteHandle is the service's current key for one taken item. The
// service takes back an item left unsettled past its hold and hands the
// same stored message over again under a new key: the pending item then
// moves to that key rather than the copy being acked as a duplicate,
// which would settle in storage a message nobody has read. mu guards key.
type remoteHandle struct {
	kind    wire.Kind
	subject string
	seq     uint64

	mu  sync.Mutex
	key string
}

func (h *remoteHandle) current() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.key
}

// rehand moves a pending item to the key of a copy of the same stored
// message handed over again; it reports whether there was one.
func (e *Endpoint) rehand(t TakenItem) bool {
	if t.Msg.ID == "" {
		return false
	}
	e.remote.mu.Lock()
	h := e.remote.pending[t.Msg.ID]
	e.remote.mu.Unlock()
	if h == nil || h.kind != t.Kind || h.subject != t.Subject || h.seq != t.Seq {
		return false
	}
	h.mu.Lock()
	h.key = t.Key
	h.mu.Unlock()
	return true
}

func (r *remoteState) record() (presence.Record, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec, r.hasRec
}

// service is the endpoint's control-surface client, calling as itself.
// On a connection it does not own (in-process, or acting for another
// identity) it leaves the connection's error handler alone.
func (e *Endpoint) service() (*ep.Client, error) {
	e.remote.once.Do(func() {
		e.remote.client, e.remote.err = ep.NewClient(e.nc, ep.ClientOptions{
			Space:      e.space,
			Caller:     proto.Caller{Owner: e.me.Owner, Actor: e.me.Actor, UID: e.uid},
			From:       proto.From{ID: e.me.ID(), Name: e.card.Name, Role: e.role},
			SharedConn: !e.ownNC,
			Logf:       e.opts.Logf,
		})
	})
	return e.remote.client, e.remote.err
}

// Control is the endpoint's control-surface client, calling as its own
// identity on its own connection: calls to other endpoints (the managers)
// made through it hear the broker's refusals of their requests.
func (e *Endpoint) Control() (*ep.Client, error) { return e.service() }

// call runs one self-mode command of the delivery endpoint and decodes its
// data into out. No responder is ErrNoDeliveryService, said within
// describeWait rather than at the caller's deadline.
func (e *Endpoint) call(ctx context.Context, command string, args, out any) error {
	c, err := e.service()
	if err != nil {
		return err
	}
	if err := e.describeService(ctx, c); err != nil {
		return err
	}
	r, err := c.Call(ctx, wire.DeliveryEndpoint, command, args, ep.Self())
	if err != nil {
		var ee *proto.Error
		if errors.As(err, &ee) && ee.Code == proto.CodeUnavailable && ee.EffectiveOutcome() == proto.NotExecuted {
			return fmt.Errorf("%w: %s (%v)", ErrNoDeliveryService, command, err)
		}
		return fmt.Errorf("delivery service: %s: %w", command, err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		return fmt.Errorf("delivery service answered %s with garbage: %w", command, err)
	}
	return nil
}

// describeWait bounds the first look for the delivery service: a mesh
// that has none (open mode, or its service down) is said at once.
const describeWait = 3 * time.Second

// describeService learns the delivery endpoint's contract once.
func (e *Endpoint) describeService(ctx context.Context, c *ep.Client) error {
	e.remote.mu.Lock()
	done := e.remote.described
	e.remote.mu.Unlock()
	if done {
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, describeWait)
	defer cancel()
	if _, err := c.Describe(dctx, wire.DeliveryEndpoint, ""); err != nil {
		return fmt.Errorf("%w in space %s: nobody answers for it (%v)", ErrNoDeliveryService, e.space, err)
	}
	e.remote.mu.Lock()
	e.remote.described = true
	e.remote.mu.Unlock()
	return nil
}

// bindRemote joins the boot channels and, for a long-lived endpoint,
// starts taking stored items and heartbeating through the service.
func (e *Endpoint) bindRemote(ctx context.Context) error {
	for _, ch := range e.opts.Subscribe {
		r, err := e.Join(ctx, ch)
		if err != nil {
			return err
		}
		e.bootJoins = append(e.bootJoins, r)
	}
	e.remote.stopped = make(chan struct{})
	if e.opts.OneShot || e.profile == wire.ProfileObserver {
		close(e.remote.stopped)
		return nil
	}
	e.remote.session = wire.NewID()
	// The first presence write must succeed, as for a local writer.
	if err := e.remotePresence(PresenceArgs{Kind: e.card.Kind, Description: e.card.Description, Tags: e.card.Tags}); err != nil {
		close(e.remote.stopped)
		return fmt.Errorf("going online through the delivery service: %w", err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); e.pump() }()
	go func() { defer wg.Done(); e.beat() }()
	go func() { wg.Wait(); close(e.remote.stopped) }()
	return nil
}

// pump long-polls the service for stored items and queues them, taking
// no more than the inbox has room for: what does not fit stays with the
// service until the application reads.
func (e *Endpoint) pump() {
	backoff := 250 * time.Millisecond
	for e.ctx.Err() == nil {
		room := min(takeBatch, MaxInbox-e.inbox.size())
		if room <= 0 {
			select {
			case <-e.ctx.Done():
				return
			case <-time.After(roomPoll):
			}
			continue
		}
		ctx, cancel := context.WithTimeout(e.ctx, takeWait+10*time.Second)
		err := e.takeRemote(ctx, room, takeWait)
		cancel()
		if err == nil {
			backoff = 250 * time.Millisecond
			// Let a reader woken by what was just queued run before
			// this goroutine asks for more.
			runtime.Gosched()
			continue
		}
		if e.ctx.Err() != nil {
			return
		}
		e.logf("reading stored messages: %v (retrying in %s)", err, backoff)
		select {
		case <-e.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, serviceBackoff)
	}
}

// beat tells the service every heartbeat that this endpoint is alive, so
// it keeps the presence record fresh; silence takes the record offline.
func (e *Endpoint) beat() {
	t := time.NewTicker(remoteBeat)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-t.C:
			if err := e.remotePresence(PresenceArgs{}); err != nil && e.ctx.Err() == nil {
				e.logf("presence heartbeat: %v", err)
			}
		}
	}
}

// remotePresence writes (or refreshes) this endpoint's presence record.
func (e *Endpoint) remotePresence(a PresenceArgs) error {
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	var r PresenceReply
	a.Session = e.remote.session
	if err := e.call(ctx, wire.DeliveryPresence, a, &r); err != nil {
		return err
	}
	e.remote.mu.Lock()
	defer e.remote.mu.Unlock()
	if !e.remote.hasRec {
		e.remote.rec = presence.Record{Card: e.card, LifecycleUID: e.uid}
	}
	rec := &e.remote.rec
	if presence.Status(r.Status) != rec.Status {
		rec.StatusSince = time.Now().UnixMilli()
	}
	rec.Status, rec.Activity, rec.Attention = presence.Status(r.Status), r.Activity, presence.Attention(r.Attention)
	rec.TS = time.Now().UnixMilli()
	e.remote.hasRec = true
	return nil
}

// closeRemote writes the final offline record and waits for the pump and
// heartbeat to end (the endpoint's context is cancelled by Close).
func (e *Endpoint) closeRemote() error {
	var err error
	if _, ok := e.remote.record(); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		c, cerr := e.service()
		if cerr == nil {
			_, err = c.Call(ctx, wire.DeliveryEndpoint, wire.DeliveryPresence, PresenceArgs{Offline: true, Session: e.remote.session}, ep.Self())
		}
		cancel()
	}
	return err
}

// takeRemote takes up to max stored items (waiting up to wait for the
// first) and queues them; an item the inbox already has is settled at once.
func (e *Endpoint) takeRemote(ctx context.Context, max int, wait time.Duration) error {
	var r TakeReply
	if err := e.call(ctx, wire.DeliveryTake, TakeArgs{Max: max, WaitMs: wait.Milliseconds(), Session: e.remote.session}, &r); err != nil {
		return err
	}
	e.queueTaken(r)
	return nil
}

// queueTaken queues what a take brought. An item's handle is registered
// before the item is queued: once queued the application may read and
// settle it at once, and a settle that ran before the registration would
// leave a stale handle that swallows the item's next hand-over.
func (e *Endpoint) queueTaken(r TakeReply) {
	for reason, n := range r.Rejected {
		for range n {
			e.inbox.reject(wire.Reject(reason))
		}
	}
	for _, t := range r.Items {
		if e.rehand(t) {
			continue
		}
		it, h, ok := e.remoteItem(t)
		if !ok {
			_ = e.settle(t.Key, false)
			continue
		}
		id := t.Msg.ID
		var prev *remoteHandle
		if id != "" {
			e.remote.mu.Lock()
			if e.remote.pending == nil {
				e.remote.pending = map[string]*remoteHandle{}
			}
			prev = e.remote.pending[id]
			e.remote.pending[id] = h
			e.remote.mu.Unlock()
		}
		if e.inbox.add(it) {
			continue
		}
		// A duplicate of what the inbox holds or handed over: the handle
		// on record stays that copy's, and this one is settled.
		if id != "" {
			e.remote.mu.Lock()
			if e.remote.pending[id] == h {
				if prev != nil {
					e.remote.pending[id] = prev
				} else {
					delete(e.remote.pending, id)
				}
			}
			e.remote.mu.Unlock()
		}
		_ = it.Ack()
	}
}

// remoteItem checks an item the service handed over as any delivery is
// checked: the sender comes from the subject and must match from.id. Its
// settling goes to the handle's current key.
func (e *Endpoint) remoteItem(t TakenItem) (*Item, *remoteHandle, bool) {
	sub, err := wire.ParseSubject(t.Subject)
	if err != nil || sub.Surfaceable() != nil || t.Msg.From.ID != sub.Sender.ID() {
		e.inbox.reject(wire.RejectSenderMismatch)
		return nil, nil, false
	}
	h := &remoteHandle{kind: t.Kind, subject: t.Subject, seq: t.Seq, key: t.Key}
	id := t.Msg.ID
	return &Item{
		Kind: sub.Kind, Msg: t.Msg, Subject: sub, Historical: t.Historical, Durable: true, Seq: t.Seq, stream: t.Stream, Received: time.Now(),
		remote: func(release bool) error {
			e.remote.mu.Lock()
			if e.remote.pending[id] == h {
				delete(e.remote.pending, id)
			}
			e.remote.mu.Unlock()
			return e.settle(h.current(), release)
		},
	}, h, true
}

// settle acks (or releases) one taken item.
func (e *Endpoint) settle(key string, release bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return e.call(ctx, wire.DeliverySettle, SettleArgs{Keys: []string{key}, Release: release}, nil)
}

// lookupRemote asks the service what the space's records say of names.
func (e *Endpoint) lookupRemote(ctx context.Context, names ...string) ([]IdentityInfo, error) {
	var r LookupReply
	if err := e.call(ctx, wire.DeliveryLookup, LookupArgs{Names: names}, &r); err != nil {
		return nil, err
	}
	return r.Identities, nil
}

// remoteRoster is the service's roster, refreshed every heartbeat while
// the endpoint lives. Times are moved onto the local clock. mu guards it.
type remoteRoster struct {
	e       *Endpoint
	changes chan struct{}

	mu     sync.Mutex
	peers  []presence.Peer
	view   presence.View
	lastOK time.Time
	digest string
}

// rosterRemote fetches the roster once and keeps it fresh in the background.
func (e *Endpoint) rosterRemote(ctx context.Context) (*remoteRoster, error) {
	e.remote.mu.Lock()
	rr := e.remote.roster
	e.remote.mu.Unlock()
	if rr != nil {
		return rr, nil
	}
	rr = &remoteRoster{e: e, changes: make(chan struct{}, 1), view: presence.View{State: presence.Unpopulated}}
	if err := rr.refresh(ctx); err != nil {
		return nil, err
	}
	e.remote.mu.Lock()
	if e.remote.roster != nil {
		rr = e.remote.roster
	} else {
		e.remote.roster = rr
		go rr.run()
	}
	e.remote.mu.Unlock()
	return rr, nil
}

func (rr *remoteRoster) run() {
	t := time.NewTicker(remoteBeat)
	defer t.Stop()
	for {
		select {
		case <-rr.e.ctx.Done():
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(rr.e.ctx, remoteBeat*2)
			_ = rr.refresh(ctx)
			cancel()
		}
	}
}

func (rr *remoteRoster) refresh(ctx context.Context) error {
	var r RosterReply
	if err := rr.e.call(ctx, wire.DeliveryRoster, struct{}{}, &r); err != nil {
		return err
	}
	now := time.Now()
	shift := func(ms int64) time.Time {
		if ms == 0 {
			return time.Time{}
		}
		return now.Add(time.Duration(ms-r.NowMs) * time.Millisecond)
	}
	peers := make([]presence.Peer, 0, len(r.Peers))
	for _, p := range r.Peers {
		var rec presence.Record
		_ = json.Unmarshal(p.Record, &rec)
		peers = append(peers, presence.Peer{
			ID: p.ID, Name: p.Name, Role: p.Role, Record: rec, Status: presence.Status(p.Status),
			Offline: p.Offline, OfflineReason: p.OfflineReason, LastHeard: shift(p.LastHeardMs),
			HeartbeatAt: time.UnixMilli(p.HeartbeatMs), StatusSince: shift(p.StatusSinceMs), Known: p.Known,
		})
	}
	view := presence.View{State: presence.ViewState(r.View), Fresh: r.View == string(presence.Current),
		StaleSince: shift(r.StaleSinceMs), LastDelivery: shift(r.LastDeliveryMs)}
	b, _ := json.Marshal(r.Peers)
	rr.mu.Lock()
	changed := string(b)+r.View != rr.digest
	rr.peers, rr.view, rr.lastOK, rr.digest = peers, view, now, string(b)+r.View
	rr.mu.Unlock()
	if changed {
		select {
		case rr.changes <- struct{}{}:
		default:
		}
	}
	return nil
}

// Roster is the last roster the service gave.
func (rr *remoteRoster) Roster() []presence.Peer {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return append([]presence.Peer(nil), rr.peers...)
}

// View is the service's view, or stale when the service has not answered
// for longer than the presence TTL.
func (rr *remoteRoster) View() presence.View {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if since := rr.lastOK.Add(presence.TTL); time.Now().After(since) {
		return presence.View{State: presence.Stale, StaleSince: since, LastDelivery: rr.view.LastDelivery}
	}
	return rr.view
}

// Changes signals, coalesced, that a refresh changed the roster or view.
func (rr *remoteRoster) Changes() <-chan struct{} { return rr.changes }
