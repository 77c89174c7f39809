package mesh

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Receipts with rungs: the connector that holds a recipient's inbox
// publishes each rung a directed item or a mention reaches (taken into its
// inbox, injected or pulled, acked) on the sender's receipt subject, and
// why it waits where it waits. Only a connector reading storage itself
// publishes (a seat's connector in its manager, an agent's host in the
// delivery service, the operator): those connections are trusted, and an
// agent's credential may subscribe to its own receipts but publish none,
// so a receipt cannot be forged.

// noteState is an item's receipt publisher and the last note it sent.
// mu guards last.
type noteState struct {
	publish func(rung, why string) // nil: the item gets no receipts
	mu      sync.Mutex
	last    string
	via     string // how it was settled: "" (pulled), injected, or a drop reason
}

// noter returns the publisher of an item's receipts, nil when it gets
// none: only a live arrival addressed to this identity (a DM, a task, a
// mention of it) with an id that fits a subject, on an endpoint that
// reads storage itself.
func (e *Endpoint) noter(it *Item) func(rung, why string) {
	if e.mediated || it.Historical || it.Echo || !(it.Directed() || render.Mentions(it.Msg, e.me)) {
		return nil
	}
	subject, ok := wire.ReceiptSubject(e.space, it.Subject.Sender, it.Msg.ID)
	if !ok {
		return nil
	}
	id, to, nc := it.Msg.ID, e.me.ID(), e.nc
	return func(rung, why string) {
		b, _ := json.Marshal(wire.DeliveryNote{ID: id, To: to, Rung: rung, Why: why, At: time.Now().UTC()})
		_ = nc.Publish(subject, b)
	}
}

// notify publishes a rung the item reached, once per rung and reason.
func (it *Item) notify(rung, why string) {
	n := &it.notes
	if n.publish == nil {
		return
	}
	n.mu.Lock()
	key := rung + "\x00" + why
	same := n.last == key
	n.last = key
	n.mu.Unlock()
	if !same {
		n.publish(rung, why)
	}
}

// Note tells the sender why the item waits at its connector ("held:
// person typing"), or that it was injected (rung wire.RungInjected, after
// the terminal accepted every byte). A connector calls it; a repeat of the
// last note is not sent again.
func (it *Item) Note(rung, why string) {
	if rung == wire.RungInjected {
		it.notes.mu.Lock()
		it.notes.via = wire.RungInjected
		it.notes.mu.Unlock()
	}
	it.notify(rung, why)
}

// Drop settles an item nobody will read (a muted channel's post): it is
// acked, and the sender's receipt says why.
func (it *Item) Drop(why string) error {
	it.notes.mu.Lock()
	it.notes.via = "dropped: " + why
	it.notes.mu.Unlock()
	return it.Ack()
}

// settled publishes the last rungs of an acked item: pulled when nothing
// else handed it over, then acked (with the drop reason, if any).
func (it *Item) settled() {
	it.notes.mu.Lock()
	via := it.notes.via
	it.notes.mu.Unlock()
	why := ""
	switch via {
	case "":
		it.notify(wire.RungPulled, "")
	case wire.RungInjected:
	default:
		why = via
	}
	it.notify(wire.RungAcked, why)
}

// Progress is how far one message got at its recipient, as its receipts
// said: the highest rung reached, the rung and reason of the latest note
// (a message evicted from a full inbox falls back to stored), and when.
type Progress struct {
	ID       string    `json:"id"`
	To       string    `json:"to,omitempty"`
	Reached  string    `json:"reached"`
	Latest   string    `json:"latest"`
	Why      string    `json:"why,omitempty"`
	At       time.Time `json:"at"`
	Injected bool      `json:"injected,omitempty"` // injected rather than pulled
}

// Reaches reports whether the progress is at rung or past it.
func (p Progress) Reaches(rung string) bool { return wire.RungRank(p.Reached) >= wire.RungRank(rung) }

func (p Progress) String() string {
	s := p.Reached
	if p.Latest != "" && p.Latest != p.Reached {
		s += ", now " + p.Latest
	}
	if p.Why != "" {
		s += " (" + p.Why + ")"
	}
	return s
}

// ReceiptWatch follows the receipts of this endpoint's own messages. Open
// it before sending, so no note can come before the watch. mu guards
// seen.
type ReceiptWatch struct {
	sub   *nats.Subscription
	notes chan *nats.Msg
	mu    sync.Mutex
	seen  map[string]map[string]Progress // message id -> recipient -> progress
}

// WatchReceipts subscribes to the receipts of messages this endpoint sends.
func (e *Endpoint) WatchReceipts() (*ReceiptWatch, error) {
	w := &ReceiptWatch{notes: make(chan *nats.Msg, 1024), seen: map[string]map[string]Progress{}}
	start := time.Now()
	sub, err := e.nc.ChanSubscribe(wire.ReceiptFilter(e.space, e.me)+".*", w.notes)
	if err != nil {
		return nil, fmt.Errorf("subscribing to receipts: %w", err)
	}
	if err := e.nc.FlushTimeout(5 * time.Second); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("subscribing to receipts: %w", err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
	defer cancel()
	if err := e.awaitRefusal(ctx, sub.Subject, "subscription", start); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("this credential may not follow its receipts (minted before receipts existed? mint it again): %w", err)
	}
	w.sub = sub
	return w, nil
}

// Close ends the watch.
func (w *ReceiptWatch) Close() { _ = w.sub.Unsubscribe() }

// Wait follows message id until want recipients reached rung, or ctx
// ends; it returns how far it got at each recipient heard from (none
// heard from: a single progress at stored, recipient unknown). onNote,
// when set, sees every note as it comes.
func (w *ReceiptWatch) Wait(ctx context.Context, id, rung string, want int, onNote func(Progress)) []Progress {
	// Notes already here first, so what is returned is current.
	for drained := false; !drained; {
		select {
		case m := <-w.notes:
			w.take(m, id, onNote)
		default:
			drained = true
		}
	}
	for w.reached(id, rung) < max(want, 1) {
		select {
		case <-ctx.Done():
			return w.progress(id)
		case m := <-w.notes:
			w.take(m, id, onNote)
		}
	}
	return w.progress(id)
}

// take records one note; onNote sees it when it is about id.
func (w *ReceiptWatch) take(m *nats.Msg, id string, onNote func(Progress)) {
	var n wire.DeliveryNote
	if json.Unmarshal(m.Data, &n) != nil || wire.RungRank(n.Rung) == 0 || n.ID == "" {
		return
	}
	w.mu.Lock()
	if w.seen[n.ID] == nil {
		w.seen[n.ID] = map[string]Progress{}
	}
	q, ok := w.seen[n.ID][n.To]
	if !ok {
		q = Progress{ID: n.ID, Reached: wire.RungStored}
	}
	q = q.with(n)
	w.seen[n.ID][n.To] = q
	w.mu.Unlock()
	if n.ID == id && onNote != nil {
		onNote(q)
	}
}

// reached counts the recipients of id at rung or past it (stored counts
// the message itself once, before anyone is heard from).
func (w *ReceiptWatch) reached(id, rung string) int {
	n := 0
	for _, p := range w.progress(id) {
		if p.Reaches(rung) {
			n++
		}
	}
	return n
}

func (w *ReceiptWatch) progress(id string) []Progress {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen[id]) == 0 {
		return []Progress{{ID: id, Reached: wire.RungStored, Latest: wire.RungStored}}
	}
	out := make([]Progress, 0, len(w.seen[id]))
	for _, p := range w.seen[id] {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].To < out[j].To })
	return out
}

func (p Progress) with(n wire.DeliveryNote) Progress {
	if wire.RungRank(n.Rung) > wire.RungRank(p.Reached) {
		p.Reached = n.Rung
	}
	if n.Rung == wire.RungInjected {
		p.Injected = true
	}
	p.To, p.Latest, p.Why, p.At = n.To, n.Rung, n.Why, n.At
	return p
}

// WatchNotes hands fn each receipt note of this endpoint's identity's own
// messages as it is published (from whichever of its processes sent
// them), until stop is called. Notes are not stored: only a watch open
// when one is published sees it.
func (e *Endpoint) WatchNotes(fn func(wire.DeliveryNote)) (stop func(), err error) {
	sub, err := e.nc.Subscribe(wire.ReceiptFilter(e.space, e.me)+".*", func(m *nats.Msg) {
		var n wire.DeliveryNote
		if json.Unmarshal(m.Data, &n) != nil || wire.RungRank(n.Rung) == 0 || n.ID == "" {
			return
		}
		fn(n)
	})
	if err != nil {
		return nil, fmt.Errorf("watching the receipts of %s: %w", e.me, err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}

// CountReached is how many recipients' progress is at rung or past it.
func CountReached(progress []Progress, rung string) int {
	n := 0
	for _, p := range progress {
		if p.Reaches(rung) {
			n++
		}
	}
	return n
}

// ExplainWaiting fills in why a DM nobody has taken yet waits: how its
// recipient looks on the roster now. Other progress is returned as it is.
func (e *Endpoint) ExplainWaiting(ctx context.Context, r Receipt, progress []Progress) []Progress {
	if r.Kind != wire.KindDM || len(progress) != 1 || progress[0].To != "" {
		return progress
	}
	p := &progress[0]
	p.To = r.To
	peer, err := e.ResolvePeer(ctx, r.To)
	switch {
	case err != nil:
		p.Why = "recipient's state unknown: " + err.Error()
	case peer.Status == "offline" || peer.Status == "":
		p.Why = "recipient offline: its connector takes it when it comes back"
	default:
		p.Why = "recipient " + peer.Status + ", but its connector has not taken it (its inbox may be full)"
	}
	return progress
}
