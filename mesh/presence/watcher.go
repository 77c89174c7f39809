package presence

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// WatcherOption configures a Watcher.
type WatcherOption func(*Watcher)

// OnWarning receives recoverable warnings: a dropped record (card.id not
// its key, not a record, unknown status), a view gone stale naming the
// silent interval, a rebind and its failure. It is called from the
// watcher's goroutine, never with a lock held.
func OnWarning(fn func(string)) WatcherOption {
	return func(w *Watcher) { w.onWarning = fn }
}

// Watcher keeps a roster of the presence bucket and derives offline peers,
// but only while its own watch is demonstrably live (spec §5).
//
// mu guards everything under it. The run goroutine alone owns the
// jetstream watch and the fields after the mu group (the current binding's
// replay bookkeeping); it takes mu to publish what it learns. Warnings and
// change notifications are sent after mu is released.
type Watcher struct {
	kv        jetstream.KeyValue
	onWarning func(string)
	changes   chan struct{} // buffered 1, coalescing
	snapshot  chan struct{} // closed when a replay with at least one entry has been consumed

	// Test hooks: hold delays consuming the watch; rebindHeld suppresses rebinds.
	hold       chan struct{}
	rebindHeld atomic.Bool

	mu           sync.Mutex
	started      bool
	closed       bool
	watching     bool // from Start until the run goroutine ends
	cancel       context.CancelFunc
	done         chan struct{}
	peers        roster
	populated    bool      // the first binding's replay has been consumed
	boundEmpty   bool      // the latest replay found the bucket empty and nothing came since
	lastDelivery time.Time // local time the watch last delivered an entry or an end-of-replay marker
	snapshotted  bool      // snapshot is closed
	lastState    ViewState // the view state last announced through Changes
	staleWarned  bool      // the current stale episode has been reported

	// Owned by the run goroutine (Start sets them before it exists); the
	// replay fields are also read by deliver under mu.
	kw          jetstream.KeyWatcher
	lastBind    time.Time
	replaying   bool
	rebound     bool // the current binding replaced an earlier one
	replayCount int
	replaySeen  map[string]bool
}

// NewWatcher prepares a roster watcher on the presence bucket.
func NewWatcher(kv jetstream.KeyValue, opts ...WatcherOption) *Watcher {
	w := &Watcher{
		kv:       kv,
		changes:  make(chan struct{}, 1),
		snapshot: make(chan struct{}),
		peers:    roster{},
	}
	for _, o := range opts {
		o(w)
	}
	return w
}

// Start binds a watch on every key of the bucket (deletes included) and
// consumes it until Close or until ctx ends.
func (w *Watcher) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		return ErrClosed
	case w.started:
		return ErrStarted
	}
	rctx, cancel := context.WithCancel(ctx)
	kw, err := w.kv.WatchAll(rctx)
	if err != nil {
		cancel()
		return fmt.Errorf("watching presence bucket %s: %w", w.kv.Bucket(), err)
	}
	w.kw, w.lastBind = kw, time.Now()
	w.replaying, w.replaySeen = true, map[string]bool{}
	w.started, w.watching, w.cancel, w.done = true, true, cancel, make(chan struct{})
	w.lastState = Unpopulated
	go w.run(rctx)
	return nil
}

// Close stops the watch and waits for the watcher's goroutine. The roster
// stays readable; View reports not watching.
func (w *Watcher) Close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	cancel, done := w.cancel, w.done
	w.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// Changes signals, coalesced, that the roster or the view changed.
// Unchanged heartbeats do not signal; ages advance without events.
func (w *Watcher) Changes() <-chan struct{} { return w.changes }

// WaitForSnapshot reports whether a replay of the bucket that held at least
// one record has been consumed within timeout. An empty bucket never
// signals, so false is not proof that nobody is present.
func (w *Watcher) WaitForSnapshot(ctx context.Context, timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-w.snapshot:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	select {
	case <-w.snapshot:
		return true
	default:
		return false
	}
}

// Roster is every peer seen, offline ones included, sorted by lowercase
// name then id.
func (w *Watcher) Roster() []Peer {
	w.mu.Lock()
	ps := make([]Peer, 0, len(w.peers))
	for _, p := range w.peers {
		ps = append(ps, p.clone())
	}
	w.mu.Unlock()
	sortRoster(ps)
	return ps
}

// Peer is the row for key id (dot-form owner.actor).
func (w *Watcher) Peer(id string) (Peer, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.peers[id]
	if !ok {
		return Peer{}, false
	}
	return p.clone(), true
}

// View says whether the roster is a picture of now (spec presenceView).
func (w *Watcher) View() View {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.viewLocked(time.Now())
}

func (w *Watcher) viewLocked(now time.Time) View {
	switch {
	case !w.watching:
		return View{State: Current, Fresh: true, LastDelivery: w.lastDelivery}
	case !w.populated:
		return View{State: Unpopulated, LastDelivery: w.lastDelivery}
	case w.boundEmpty, now.Before(w.lastDelivery.Add(TTL)):
		return View{State: Current, Fresh: true, LastDelivery: w.lastDelivery}
	default:
		return View{State: Stale, StaleSince: w.lastDelivery.Add(TTL), LastDelivery: w.lastDelivery}
	}
}

// noteViewLocked records the view state and reports whether it changed
// since it was last announced.
func (w *Watcher) noteViewLocked(now time.Time) bool {
	st := w.viewLocked(now).State
	if st == w.lastState {
		return false
	}
	w.lastState = st
	return true
}

// emit sends warnings and a change notification; call without mu.
func (w *Watcher) emit(changed bool, warnings ...string) {
	if w.onWarning != nil {
		for _, s := range warnings {
			if s != "" {
				w.onWarning(s)
			}
		}
	}
	if changed {
		select {
		case w.changes <- struct{}{}:
		default:
		}
	}
}
