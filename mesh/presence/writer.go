package presence

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// WriterOption configures a Writer.
type WriterOption func(*Writer)

// OnStuck is called once, from the heartbeat goroutine, when writes have
// failed for a full TTL; it is armed again only by a successful write. The
// error wraps ErrWriteStuck and the last failure.
func OnStuck(fn func(err error)) WriterOption {
	return func(w *Writer) { w.onStuck = fn }
}

// Writer owns one presence key (card.id) and keeps it alive. It is the only
// writer of that key.
//
// mu guards rec and the lifecycle fields. The heartbeat goroutine is the
// only one that writes while the writer runs; Start writes before it exists
// and Close after it has ended, so writes never overtake each other.
// failingSince and stuck belong to the heartbeat goroutine.
type Writer struct {
	kv      jetstream.KeyValue
	onStuck func(error)
	kick    chan struct{} // buffered 1: write now instead of at the next tick

	mu      sync.Mutex
	rec     Record
	started bool
	closed  bool
	cancel  context.CancelFunc
	stopped chan struct{} // closed when the heartbeat goroutine returns

	failingSince time.Time
	stuck        bool
}

// NewWriter prepares a writer for card under key card.id; nothing is written
// until Start. Status starts idle and attention open. An empty kind becomes
// agent, empty owner/actor are taken from the id and an empty
// protocolVersion becomes ProtocolVersion.
func NewWriter(kv jetstream.KeyValue, card Card, lifecycleUID string, opts ...WriterOption) *Writer {
	now := time.Now().UnixMilli()
	card = Record{Card: card}.clone().Card
	if card.Kind == "" {
		card.Kind = KindAgent
	}
	if card.ProtocolVersion == "" {
		card.ProtocolVersion = ProtocolVersion
	}
	if p, err := wire.ParsePrincipal(card.ID); err == nil {
		if card.Owner == "" {
			card.Owner = p.Owner
		}
		if card.Actor == "" {
			card.Actor = p.Actor
		}
	}
	w := &Writer{
		kv:      kv,
		kick:    make(chan struct{}, 1),
		stopped: make(chan struct{}),
		rec: Record{
			Card:         card,
			Status:       Idle,
			StatusSince:  now,
			LifecycleUID: lifecycleUID,
			Attention:    Open,
		},
	}
	for _, o := range opts {
		o(w)
	}
	return w
}

// Key is the KV key this writer owns (card.id).
func (w *Writer) Key() string { return w.rec.Card.ID }

// validate refuses a card that could not be published under its own key.
func (w *Writer) validate() error {
	c := w.rec.Card
	p, err := wire.ParsePrincipal(c.ID)
	if err != nil {
		return fmt.Errorf("%w: card id: %w", ErrInvalidCard, err)
	}
	if c.Owner != p.Owner || c.Actor != p.Actor {
		return fmt.Errorf("%w: card owner %q / actor %q contradict id %q", ErrInvalidCard, c.Owner, c.Actor, c.ID)
	}
	if c.Kind != KindAgent && c.Kind != KindEndpoint {
		return fmt.Errorf("%w: kind %q is not agent or endpoint", ErrInvalidCard, c.Kind)
	}
	if utf8.RuneCountInString(c.Name) > MaxNameLength {
		return fmt.Errorf("%w: name is longer than %d characters", ErrInvalidCard, MaxNameLength)
	}
	if u := w.rec.LifecycleUID; u != "" && !wire.ValidLifecycleUID(u) {
		return fmt.Errorf("%w: lifecycle uid %q is not 26-32 characters of a-z 0-9", ErrInvalidCard, u)
	}
	return nil
}

// Start writes the first record, which must succeed, then heartbeats every
// Heartbeat until Close or until ctx ends. Cancelling ctx is a crash-like
// stop: the heartbeat ends without a final offline record, so observers see
// the peer go quiet and derive offline after the TTL.
func (w *Writer) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		return ErrClosed
	case w.started:
		return ErrStarted
	}
	if err := w.validate(); err != nil {
		return err
	}
	w.rec.TS = time.Now().UnixMilli()
	if err := w.put(ctx, w.rec); err != nil {
		return err
	}
	hctx, cancel := context.WithCancel(ctx)
	w.started, w.cancel = true, cancel
	go w.heartbeat(hctx)
	return nil
}

// Stopped is closed once the heartbeat has ended, after Close or after the
// context given to Start ended. It never closes for a writer never started.
func (w *Writer) Stopped() <-chan struct{} { return w.stopped }

func (w *Writer) heartbeat(ctx context.Context) {
	defer close(w.stopped)
	t := time.NewTicker(Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.kick:
			t.Reset(Heartbeat)
		}
		w.mu.Lock()
		w.rec.TS = time.Now().UnixMilli()
		rec := w.rec.clone()
		w.mu.Unlock()
		wctx, cancel := context.WithTimeout(ctx, Heartbeat)
		err := w.put(wctx, rec)
		cancel()
		if ctx.Err() != nil {
			return
		}
		w.noteResult(err)
	}
}

// noteResult tracks how long writes have been failing and reports a stuck
// writer once per failure episode.
func (w *Writer) noteResult(err error) {
	if err == nil {
		w.failingSince, w.stuck = time.Time{}, false
		return
	}
	now := time.Now()
	if w.failingSince.IsZero() {
		w.failingSince = now
	}
	if !w.stuck && now.Sub(w.failingSince) >= TTL {
		w.stuck = true
		if w.onStuck != nil {
			w.onStuck(fmt.Errorf("%w: failing for %s: %w", ErrWriteStuck, now.Sub(w.failingSince).Round(time.Millisecond), err))
		}
	}
}

func (w *Writer) put(ctx context.Context, rec Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encoding presence for %s: %w", rec.Card.ID, err)
	}
	if _, err := w.kv.Put(ctx, rec.Card.ID, b); err != nil {
		return fmt.Errorf("writing presence key %s to bucket %s: %w", rec.Card.ID, w.kv.Bucket(), err)
	}
	return nil
}

// update applies fn to the record and, once started, asks the heartbeat to
// write at once.
func (w *Writer) update(fn func(r *Record, now int64)) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	fn(&w.rec, time.Now().UnixMilli())
	started := w.started
	w.mu.Unlock()
	if started {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// Set changes status and activity and writes at once. statusSince moves
// only when the status changes, activitySince only when the activity does
// (and is cleared with it), activeAt when the status becomes working.
// Offline is refused: close the writer instead.
func (w *Writer) Set(status Status, activity string) error {
	if _, err := ParseStatus(string(status)); err != nil {
		return err
	}
	return w.update(func(r *Record, now int64) {
		if status != r.Status {
			r.Status, r.StatusSince = status, now
			if status == Working {
				r.ActiveAt = now
			}
		}
		if activity != r.Activity {
			r.Activity, r.ActivitySince = activity, now
			if activity == "" {
				r.ActivitySince = 0
			}
		}
	})
}

// SetAttention changes the attention mode and writes at once.
func (w *Writer) SetAttention(a Attention) error {
	if _, err := ParseAttention(string(a)); err != nil {
		return err
	}
	return w.update(func(r *Record, _ int64) { r.Attention = a })
}

// SetCondition sets (or, with nil, clears) the condition and writes at once.
// A zero Since is stamped with the current time.
func (w *Writer) SetCondition(c *Condition) error {
	return w.update(func(r *Record, now int64) {
		if c == nil {
			r.Condition = nil
			return
		}
		cc := *c
		if cc.Since == 0 {
			cc.Since = now
		}
		r.Condition = &cc
	})
}

// SetChannelModes replaces the per-channel modes (quiet|muted) and writes
// at once.
func (w *Writer) SetChannelModes(modes map[string]string) error {
	return w.update(func(r *Record, _ int64) { r.ChannelModes = maps.Clone(modes) })
}

// Record is a copy of the record as it was last written or will next be.
func (w *Writer) Record() Record {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rec.clone()
}

// Close stops the heartbeat and writes exactly one final record: status
// offline, without attention, channelModes or statusSince. A writer never
// started writes nothing. Later calls return nil.
func (w *Writer) Close(ctx context.Context) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	started, cancel := w.started, w.cancel
	w.mu.Unlock()
	if !started {
		return nil
	}
	cancel()
	<-w.stopped
	w.mu.Lock()
	w.rec.Status = Offline
	w.rec.StatusSince = 0
	w.rec.Attention = ""
	w.rec.ChannelModes = nil
	w.rec.TS = time.Now().UnixMilli()
	rec := w.rec.clone()
	w.mu.Unlock()
	return w.put(ctx, rec)
}
