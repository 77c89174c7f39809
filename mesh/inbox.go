package mesh

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Item is one delivered message, handed to the application. Its kind comes
// from the subject it arrived on, never from the payload.
type Item struct {
	Kind       wire.Kind
	Msg        wire.Message
	Subject    wire.Subject
	Historical bool      // backfill, not a live arrival
	Durable    bool      // a stored copy that must be acked
	Seq        uint64    // stream sequence of a stored copy, 0 for a live one
	Received   time.Time // when this endpoint got it

	msg    jetstream.Msg            // nil for a live copy
	remote func(release bool) error // settles an item the delivery service handed over
	box    *inbox                   // the inbox that surfaced it, forgets it on release
}

// Ack settles a stored copy once the item has been handed over (printed,
// injected, returned to a tool). A live copy needs no ack.
func (it *Item) Ack() error {
	switch {
	case it.remote != nil:
		return it.remote(false)
	case it.msg != nil:
		return it.msg.DoubleAck(context.Background())
	}
	return nil
}

// Release gives a stored copy back for immediate redelivery (a peek). The
// inbox forgets its id, so the redelivered copy is surfaced again rather
// than dropped as a duplicate of something never handed over.
func (it *Item) Release() error {
	if it.box != nil && it.Msg.ID != "" {
		it.box.forget(it.Msg.ID)
	}
	switch {
	case it.remote != nil:
		return it.remote(true)
	case it.msg != nil:
		return it.msg.Nak()
	}
	return nil
}

// Directed reports whether the item was addressed to this endpoint alone
// (a DM) or to its role (a task).
func (it *Item) Directed() bool { return it.Kind == wire.KindDM || it.Kind == wire.KindAnycast }

// MaxInbox bounds the items waiting to be handed over. Beyond it the
// oldest channel post is dropped; directed items stay un-acked and come
// back from the broker, so nothing directed is lost.
const MaxInbox = 200

// inbox holds items until the application takes them, directed ones first.
type inbox struct {
	mu       sync.Mutex
	directed []*Item
	channel  []*Item
	notify   chan struct{} // buffered 1: something arrived
	seen     *idSet
	dropped  int
	rejected map[wire.Reject]int
	closed   bool
}

func newInbox() *inbox {
	return &inbox{notify: make(chan struct{}, 1), seen: newIDSet(4096), rejected: map[wire.Reject]int{}}
}

// add queues an item; it reports false when the item was a duplicate of a
// surfaced id (the caller acks a duplicate stored copy silently).
func (b *inbox) add(it *Item) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	if it.Msg.ID != "" && b.seen.has(it.Msg.ID) {
		return false
	}
	if it.Directed() {
		if len(b.directed) >= MaxInbox {
			// Leave it un-acked and unseen: the broker redelivers it
			// after AckWait.
			b.dropped++
			return true
		}
		b.directed = append(b.directed, it)
	} else {
		if len(b.channel) >= MaxInbox {
			old := b.channel[0]
			b.channel = b.channel[1:]
			_ = old.Ack()
			b.dropped++
		}
		b.channel = append(b.channel, it)
	}
	if it.Msg.ID != "" {
		b.seen.add(it.Msg.ID)
	}
	it.box = b
	select {
	case b.notify <- struct{}{}:
	default:
	}
	return true
}

// take removes and returns up to max items, directed first.
func (b *inbox) take(max int) []*Item {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*Item
	for len(out) < max && len(b.directed) > 0 {
		out = append(out, b.directed[0])
		b.directed = b.directed[1:]
	}
	for len(out) < max && len(b.channel) > 0 {
		out = append(out, b.channel[0])
		b.channel = b.channel[1:]
	}
	return out
}

// forget drops an id from the surfaced set: its item was given back.
func (b *inbox) forget(id string) {
	b.mu.Lock()
	b.seen.remove(id)
	b.mu.Unlock()
}

func (b *inbox) size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.directed) + len(b.channel)
}

func (b *inbox) reject(r wire.Reject) {
	b.mu.Lock()
	b.rejected[r]++
	b.mu.Unlock()
}

// drain removes and returns every queued durable item (live ones are
// dropped: nothing can bring them back).
func (b *inbox) drain() []*Item {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*Item
	for _, it := range append(b.directed, b.channel...) {
		if it.Durable {
			out = append(out, it)
		}
	}
	b.directed, b.channel = nil, nil
	return out
}

// close refuses further items and returns what was queued, untaken.
func (b *inbox) close() []*Item {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	out := append(b.directed, b.channel...)
	b.directed, b.channel = nil, nil
	return out
}

// Await hands over up to max queued items, waiting up to wait for the
// first; it never fetches (a consuming endpoint's queue fills itself).
func (e *Endpoint) Await(ctx context.Context, max int, wait time.Duration) []*Item {
	if items := e.inbox.take(max); len(items) > 0 || wait <= 0 {
		return items
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-e.inbox.notify:
			if items := e.inbox.take(max); len(items) > 0 {
				return items
			}
		case <-t.C:
			return e.inbox.take(max)
		case <-ctx.Done():
			return nil
		case <-e.ctx.Done():
			return nil
		}
	}
}

// Next waits for the next item, directed ones first.
func (e *Endpoint) Next(ctx context.Context) (*Item, error) {
	for {
		if items := e.inbox.take(1); len(items) == 1 {
			return items[0], nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-e.ctx.Done():
			return nil, ErrClosed
		case <-e.inbox.notify:
		}
	}
}

// Pending is the number of items waiting to be taken.
func (e *Endpoint) Pending() int { return e.inbox.size() }

// Arrivals signals (coalesced) that items are waiting.
func (e *Endpoint) Arrivals() <-chan struct{} { return e.inbox.notify }

// Rejected counts deliveries refused by the receive pipeline, by reason.
func (e *Endpoint) Rejected() map[wire.Reject]int {
	e.inbox.mu.Lock()
	defer e.inbox.mu.Unlock()
	out := make(map[wire.Reject]int, len(e.inbox.rejected))
	for k, v := range e.inbox.rejected {
		out[k] = v
	}
	return out
}

// onDurable runs the receive pipeline on a stored DM or task: a permanent
// anomaly is terminated, never retried; an own echo is acked; a duplicate
// of a surfaced id is acked silently; the rest waits for the application,
// un-acked until it is handed over.
func (e *Endpoint) onDurable(m jetstream.Msg) {
	d, reject, _ := wire.Decode(m.Subject(), m.Data())
	if reject != "" {
		e.inbox.reject(reject)
		_ = m.Term()
		return
	}
	if d.Msg.From.ID == e.me.ID() {
		_ = m.Ack()
		return
	}
	it := &Item{Kind: d.Subject.Kind, Msg: d.Msg, Subject: d.Subject, Durable: true, Received: time.Now(), msg: m}
	if meta, err := m.Metadata(); err == nil {
		it.Seq = meta.Sequence.Stream
	}
	if !e.inbox.add(it) {
		_ = m.Ack()
	}
}

// onLive runs the receive pipeline on a live channel post: anomalies and
// own echoes are dropped, never acked (there is nothing to ack).
func (e *Endpoint) onLive(m *nats.Msg) {
	d, reject, _ := wire.Decode(m.Subject, m.Data)
	if reject != "" {
		e.inbox.reject(reject)
		return
	}
	if d.Msg.From.ID == e.me.ID() {
		return
	}
	e.inbox.add(&Item{Kind: d.Subject.Kind, Msg: d.Msg, Subject: d.Subject, Received: time.Now()})
}

// idSet remembers surfaced message ids in two rotating generations, so
// memory stays bounded and a recent id is always remembered.
type idSet struct {
	cur, prev map[string]struct{}
	max       int
}

func newIDSet(max int) *idSet {
	return &idSet{cur: map[string]struct{}{}, prev: map[string]struct{}{}, max: max}
}

func (s *idSet) has(id string) bool {
	if _, ok := s.cur[id]; ok {
		return true
	}
	_, ok := s.prev[id]
	return ok
}

func (s *idSet) remove(id string) {
	delete(s.cur, id)
	delete(s.prev, id)
}

func (s *idSet) add(id string) {
	if len(s.cur) >= s.max {
		s.prev, s.cur = s.cur, map[string]struct{}{}
	}
	s.cur[id] = struct{}{}
}
