package mesh

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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
	Historical bool   // backfill, not a live arrival
	Durable    bool   // a stored copy that must be acked
	Seq        uint64 // stream sequence of a stored copy, 0 for a live one
	// PullOnly items are left for the agent's own inbox read and never
	// injected, whatever its attention later becomes (one held back
	// under focus, or on a quiet channel, stays so).
	PullOnly bool
	// Echo marks a DM or task this endpoint's own principal sent, seen on
	// the wire (EchoDirect): nothing to settle, and no receipt, since it
	// was not delivered to anyone here.
	Echo     bool
	Received time.Time // when this endpoint got it

	msg    jetstream.Msg            // nil for a live copy
	remote func(release bool) error // settles a stored copy the delivery service handed over
	stream string                   // the stream of a stored copy: with Seq it names the stored message
	order  uint64                   // arrival order in the inbox
	box    *inbox                   // the inbox that handed it over
	notes  noteState                // its receipts (receipt.go)
}

// stored reports whether the item is a stored copy with a handle to settle.
func (it *Item) stored() bool { return it.msg != nil || it.remote != nil }

// Ack settles a stored copy once the item has been handed over (printed,
// injected, returned to a tool). A live copy needs no ack.
func (it *Item) Ack() error {
	var err error
	switch {
	case it.remote != nil:
		err = it.remote(false)
	case it.msg != nil:
		err = it.msg.DoubleAck(context.Background())
	}
	if err == nil {
		it.settled()
	}
	return err
}

// Release gives a stored copy back for immediate redelivery (a peek): the
// inbox forgets it was handed over, so the copy is surfaced again.
func (it *Item) Release() error {
	if it.box != nil {
		it.box.forget(it)
	}
	switch {
	case it.remote != nil:
		return it.remote(true)
	case it.msg != nil:
		return it.msg.Nak()
	}
	return nil
}

// StoredAt names the stored message a copy came from: its stream and
// sequence ("" and 0 for a live copy).
func (it *Item) StoredAt() (string, uint64) { return it.stream, it.Seq }

// Directed reports whether the item was addressed to this endpoint alone
// (a DM) or to its role (a task).
func (it *Item) Directed() bool { return it.Kind == wire.KindDM || it.Kind == wire.KindAnycast }

// storedKey names the stored message a copy was handed out from, the
// same on every redelivery; "" for a live copy. It cannot collide with a
// message id, which never starts with a NUL.
func (it *Item) storedKey() string {
	if !it.stored() || it.stream == "" {
		return ""
	}
	return "\x00" + it.stream + ":" + strconv.FormatUint(it.Seq, 10)
}

// evictionKey names what a redelivery brings back: the stored message.
func (it *Item) evictionKey() string {
	if k := it.storedKey(); k != "" {
		return k
	}
	return it.Msg.ID
}

// handedOver are the keys that mark an item as handed over: its id, and
// the stored message it came from (which also covers an empty id).
func (it *Item) handedOver() []string {
	var keys []string
	if it.Msg.ID != "" {
		keys = append(keys, it.Msg.ID)
	}
	if k := it.storedKey(); k != "" {
		keys = append(keys, k)
	}
	return keys
}

// MaxInbox bounds the items waiting to be handed over (spec §12). Beyond
// it, pull-only items (history) go first, else the oldest; an evicted
// stored copy stays un-acked and comes back from the broker after its
// ack wait, so nothing stored is lost by an overflow.
const MaxInbox = 200

// MaxEvictions is how often one stored copy may be evicted before it is
// acked and reported in a notice instead of coming back forever.
const MaxEvictions = 5

// NoticeSender is the principal the space's own notices come from.
var NoticeSender = wire.Principal{Owner: "local", Actor: "cotal_delivery"}

// inbox holds items until the application takes them, directed ones
// first. Each non-empty id has at most one pending item (pending), and
// ids already handed over are remembered (seen): a later stored copy of
// one is acked silently. Lock: mu is a leaf.
type inbox struct {
	mu        sync.Mutex
	directed  []*Item // in arrival order
	channel   []*Item // in arrival order
	pending   map[string]*Item
	evictions map[string]int                     // evictionKey -> times evicted
	notice    *Item                              // what overflow discarded, waiting to be read
	discards  []string                           // described in the notice
	notify    chan struct{}                      // buffered 1: something arrived
	noter     func(*Item) func(rung, why string) // an arrival's receipt publisher; nil: none
	seen      *idSet                             // keys of items handed over
	recent    []string                           // the newest of them, oldest first, at most maxRecent
	order     uint64
	evicted   int // items pushed out by an overflow
	discarded int // stored copies acked after MaxEvictions
	rejected  map[wire.Reject]int
	closed    bool
}

func newInbox() *inbox {
	return &inbox{
		notify: make(chan struct{}, 1), seen: newIDSet(4096), rejected: map[wire.Reject]int{},
		pending: map[string]*Item{}, evictions: map[string]int{},
	}
}

// add queues an item. It reports false when the item duplicates one
// already handed over or pending (the caller acks a duplicate stored
// copy silently); true when the inbox owns it, queued or left un-acked
// for the broker to redeliver. A queued item's sender hears it was taken.
func (b *inbox) add(it *Item) bool {
	if b.noter != nil && it.notes.publish == nil {
		it.notes.publish = b.noter(it)
	}
	queued, owned := b.queue(it)
	if queued {
		it.notify(wire.RungTaken, "")
	}
	return owned
}

// queue is add under the lock; queued says the item is in the inbox now.
func (b *inbox) queue(it *Item) (queued, owned bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false, true // un-acked: the next connection gets it
	}
	for _, k := range it.handedOver() {
		if b.seen.has(k) {
			return false, false
		}
	}
	if id := it.Msg.ID; id != "" {
		if cur := b.pending[id]; cur != nil {
			return false, b.merge(cur, it)
		}
	}
	b.order++
	it.order = b.order
	if len(b.directed)+len(b.channel) >= MaxInbox && !b.makeRoom(it) {
		return false, true
	}
	if it.Directed() {
		b.directed = append(b.directed, it)
	} else {
		b.channel = append(b.channel, it)
	}
	if it.Msg.ID != "" {
		b.pending[it.Msg.ID] = it
	}
	b.signal()
	return true, true
}

// merge keeps one pending item per id. Only a stored copy's handle may
// replace what is pending (the item keeps its place and is acked when
// taken); anything else is a duplicate.
func (b *inbox) merge(cur, it *Item) bool {
	switch {
	case !it.stored():
		return false
	case !cur.stored(), cur.stream == it.stream && cur.Seq == it.Seq:
		// A live copy gains its stored handle, or a redelivery of the
		// pending stored message brings a fresh one.
		cur.msg, cur.remote, cur.Durable, cur.Seq, cur.stream = it.msg, it.remote, true, it.Seq, it.stream
		return true
	default:
		return false // another stored copy: the pending one still holds its own
	}
}

// makeRoom evicts one item for the incoming one: the oldest pull-only
// item, else the oldest. It reports false when the incoming item itself
// is the one to go.
func (b *inbox) makeRoom(in *Item) bool {
	for i, it := range b.channel {
		if it.Historical {
			b.channel = append(b.channel[:i], b.channel[i+1:]...)
			b.evict(it)
			return true
		}
	}
	if in.Historical {
		b.evict(in)
		return false
	}
	var old *Item
	if len(b.directed) > 0 && (len(b.channel) == 0 || b.directed[0].order < b.channel[0].order) {
		old, b.directed = b.directed[0], b.directed[1:]
	} else {
		old, b.channel = b.channel[0], b.channel[1:]
	}
	b.evict(old)
	return true
}

// evict drops an item from the inbox without marking it seen. A stored
// copy stays un-acked, so the broker redelivers it; after MaxEvictions of
// the same stored message it is acked and reported in the notice.
func (b *inbox) evict(it *Item) {
	if id := it.Msg.ID; id != "" && b.pending[id] == it {
		delete(b.pending, id)
	}
	b.evicted++
	if !it.stored() {
		it.notify(wire.RungTaken, "lost from a full inbox: it had no stored copy")
		return
	}
	it.notify(wire.RungStored, fmt.Sprintf("evicted from a full inbox (%d items): the broker hands it out again", MaxInbox))
	if it.remote != nil {
		// Handed over by the delivery service: give it back now, so the
		// service holds it (its own inbox, its own eviction rule) rather
		// than keeping it out for a reader that dropped it.
		go func() { _ = it.remote(true) }()
		return
	}
	key := it.evictionKey()
	if len(b.evictions) > 4*4096 {
		b.evictions = map[string]int{} // keys of copies settled elsewhere
	}
	b.evictions[key]++
	if b.evictions[key] < MaxEvictions {
		return
	}
	delete(b.evictions, key)
	it.notes.mu.Lock()
	it.notes.via = fmt.Sprintf("dropped: the inbox stayed full through %d redeliveries", MaxEvictions)
	it.notes.mu.Unlock()
	_ = it.Ack()
	b.discarded++
	b.report(it)
}

// report adds a discarded copy to the one pending notice.
func (b *inbox) report(it *Item) {
	what := "a DM from " + wire.SenderLabel(it.Subject.Sender, it.Msg.From)
	switch it.Kind {
	case wire.KindAnycast:
		what = "a task for @" + wire.CleanLabel(it.Subject.Role) + " from " + wire.SenderLabel(it.Subject.Sender, it.Msg.From)
	case wire.KindChannel:
		what = "a post to #" + wire.CleanLabel(it.Subject.Channel) + " from " + wire.SenderLabel(it.Subject.Sender, it.Msg.From)
	}
	if len(b.discards) < 10 {
		b.discards = append(b.discards, what)
	}
	text := fmt.Sprintf("cotal: %d stored message(s) were dropped unread because your inbox stayed full (%d items) through %d redeliveries each: %s",
		b.discarded, MaxInbox, MaxEvictions, strings.Join(b.discards, "; "))
	if b.discarded > len(b.discards) {
		text += fmt.Sprintf("; and %d more", b.discarded-len(b.discards))
	}
	text += ". Read your inbox more often; channel posts stay readable with `cotal history <channel>`."
	if b.notice == nil {
		b.notice = &Item{
			Kind: wire.KindDM, Received: time.Now(),
			Subject: wire.Subject{Kind: wire.KindDM, Sender: NoticeSender},
		}
	}
	b.notice.Msg = wire.Message{
		TS: time.Now().UnixMilli(), From: wire.Sender{ID: NoticeSender.ID(), Name: NoticeSender.Actor},
		Parts: wire.TextParts(text),
	}
	b.signal()
}

func (b *inbox) signal() {
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

// take removes and returns up to max items, notices and directed first.
// What it returns counts as handed over: a later copy of the same id is
// a duplicate.
func (b *inbox) take(max int) []*Item {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*Item
	if b.notice != nil && max > 0 {
		out = append(out, b.notice)
		b.notice, b.discards = nil, nil
	}
	for len(out) < max && len(b.directed) > 0 {
		out = append(out, b.directed[0])
		b.directed = b.directed[1:]
	}
	for len(out) < max && len(b.channel) > 0 {
		out = append(out, b.channel[0])
		b.channel = b.channel[1:]
	}
	b.handOverLocked(out)
	return out
}

// handOverLocked marks items as handed over; it needs mu.
func (b *inbox) handOverLocked(items []*Item) {
	for _, it := range items {
		it.box = b
		if id := it.Msg.ID; id != "" {
			delete(b.pending, id)
		}
		if it.stored() {
			delete(b.evictions, it.evictionKey())
		}
		b.remember(it.handedOver()...)
	}
}

// takeWhere removes and hands over the queued items keep chooses, in
// order, directed first, leaving the rest queued.
func (b *inbox) takeWhere(keep func(*Item) bool) []*Item {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*Item
	for _, q := range []*[]*Item{&b.directed, &b.channel} {
		rest := (*q)[:0]
		for _, it := range *q {
			if keep(it) {
				out = append(out, it)
			} else {
				rest = append(rest, it)
			}
		}
		*q = rest
	}
	b.handOverLocked(out)
	return out
}

// anyWhere reports whether a queued item satisfies pred.
func (b *inbox) anyWhere(pred func(*Item) bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, q := range [][]*Item{b.directed, b.channel} {
		for _, it := range q {
			if pred(it) {
				return true
			}
		}
	}
	return false
}

// requeue puts handed-over items back in front, not handed over any more:
// a hand-over that did not happen (an injection the pty refused).
func (b *inbox) requeue(items []*Item) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var directed, channel []*Item
	for _, it := range items {
		for _, k := range it.handedOver() {
			b.seen.remove(k)
		}
		if id := it.Msg.ID; id != "" {
			b.pending[id] = it
		}
		if it.Directed() {
			directed = append(directed, it)
		} else {
			channel = append(channel, it)
		}
	}
	b.directed = append(directed, b.directed...)
	b.channel = append(channel, b.channel...)
	b.signal()
}

// TakeWhere hands over the queued items keep chooses, leaving the rest
// queued: a connector injecting some arrivals and holding others.
func (e *Endpoint) TakeWhere(keep func(*Item) bool) []*Item { return e.inbox.takeWhere(keep) }

// Mark applies fn to every queued item, under the inbox's lock: fn must
// only set fields of the item (PullOnly).
func (e *Endpoint) Mark(fn func(*Item)) {
	e.inbox.mu.Lock()
	defer e.inbox.mu.Unlock()
	for _, q := range [][]*Item{e.inbox.directed, e.inbox.channel} {
		for _, it := range q {
			fn(it)
		}
	}
}

// AnyWhere reports whether a queued item satisfies pred.
func (e *Endpoint) AnyWhere(pred func(*Item) bool) bool { return e.inbox.anyWhere(pred) }

// Requeue gives items back to the inbox, in front, as never handed over.
func (e *Endpoint) Requeue(items []*Item) { e.inbox.requeue(items) }

// maxRecent bounds the hand-overs a one-shot reader carries to its next run.
const maxRecent = 1024

// remember marks keys as handed over.
func (b *inbox) remember(keys ...string) {
	for _, k := range keys {
		b.seen.add(k)
		b.recent = append(b.recent, k)
	}
	if n := len(b.recent) - maxRecent; n > 0 {
		b.recent = append(b.recent[:0:0], b.recent[n:]...)
	}
}

// forget undoes a hand-over: the item was given back unread.
func (b *inbox) forget(it *Item) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range it.handedOver() {
		b.seen.remove(k)
		for i, r := range b.recent {
			if r == k {
				b.recent = append(b.recent[:i], b.recent[i+1:]...)
				break
			}
		}
	}
}

func (b *inbox) size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.directed) + len(b.channel)
	if b.notice != nil {
		n++
	}
	return n
}

func (b *inbox) reject(r wire.Reject) {
	b.mu.Lock()
	b.rejected[r]++
	b.mu.Unlock()
}

// drain removes and returns every queued stored copy (live ones are
// dropped: nothing can bring them back).
func (b *inbox) drain() []*Item {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*Item
	for _, it := range append(b.directed, b.channel...) {
		if it.stored() {
			out = append(out, it)
		}
	}
	b.directed, b.channel, b.pending = nil, nil, map[string]*Item{}
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

// Queue counts the items waiting to be taken, those of them left for an
// inbox read (PullOnly), and when the oldest arrived.
func (e *Endpoint) Queue() (n, pullOnly int, oldest time.Time) {
	b := e.inbox
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, q := range [][]*Item{b.directed, b.channel} {
		for _, it := range q {
			n++
			if it.PullOnly {
				pullOnly++
			}
			if oldest.IsZero() || it.Received.Before(oldest) {
				oldest = it.Received
			}
		}
	}
	return n, pullOnly, oldest
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

// Handled lists the newest items this endpoint handed over (up to 1024,
// oldest first), as opaque keys. A one-shot reader keeps them for its
// next run and gives them back through AssumeHandled: a stored copy the
// broker hands out again after a crash (it confirms an ack before its
// disk has it) is then acked silently instead of surfacing twice.
func (e *Endpoint) Handled() []string {
	e.inbox.mu.Lock()
	defer e.inbox.mu.Unlock()
	return append([]string(nil), e.inbox.recent...)
}

// AssumeHandled marks keys from an earlier Handled as handed over. Call it
// before the first read.
func (e *Endpoint) AssumeHandled(keys []string) {
	e.inbox.mu.Lock()
	defer e.inbox.mu.Unlock()
	e.inbox.remember(keys...)
}

// Overflow counts what the inbox bound pushed out: items evicted (a stored
// one comes back from the broker) and stored copies discarded for good
// after MaxEvictions, each of them reported in a notice item.
func (e *Endpoint) Overflow() (evicted, discarded int) {
	e.inbox.mu.Lock()
	defer e.inbox.mu.Unlock()
	return e.inbox.evicted, e.inbox.discarded
}

// onDurable runs the receive pipeline on a stored DM or task: a permanent
// anomaly is terminated, never retried; an own echo is acked; a duplicate
// of a surfaced id is acked silently; the rest waits for the application,
// un-acked until it is handed over.
func (e *Endpoint) onDurable(m jetstream.Msg) {
	if wire.ServerAuthored(m.Headers()) {
		e.inbox.reject(wire.RejectServerAuthored)
		_ = m.Term()
		return
	}
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
		it.Seq, it.stream = meta.Sequence.Stream, meta.Stream
	}
	if !e.inbox.add(it) {
		_ = m.Ack()
	}
}

// onLive runs the receive pipeline on a live channel post: anomalies and
// own echoes (unless Options.Echoes) are dropped, never acked (there is
// nothing to ack).
func (e *Endpoint) onLive(m *nats.Msg) {
	d, ok := e.received(m)
	if !ok || d.Msg.From.ID == e.me.ID() && !e.opts.Echoes {
		return
	}
	e.inbox.add(&Item{Kind: d.Subject.Kind, Msg: d.Msg, Subject: d.Subject, Received: time.Now()})
}

// received runs the receive steps on a message that came over a core
// subscription; one the broker authored, or that fails them, is counted as
// rejected and not ok.
func (e *Endpoint) received(m *nats.Msg) (wire.Delivery, bool) {
	if wire.ServerAuthored(m.Header) {
		e.inbox.reject(wire.RejectServerAuthored)
		return wire.Delivery{}, false
	}
	d, reject, _ := wire.Decode(m.Subject, m.Data)
	if reject != "" {
		e.inbox.reject(reject)
		return wire.Delivery{}, false
	}
	return d, true
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

// remove forgets id in both generations.
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
