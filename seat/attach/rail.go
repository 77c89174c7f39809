package attach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Rail bounds (spec §12).
const (
	DefaultIdle  = time.Second      // re-advertise credit after this long without a frame sent
	DefaultStall = 30 * time.Second // break the rail after this long without a frame heard or credit given
	MaxFrame     = 1 << 20          // the largest encoded frame
)

// RailOptions tune a rail; zero values are the spec's.
type RailOptions struct {
	Idle     time.Duration // 0: DefaultIdle
	Stall    time.Duration // 0: DefaultStall
	MaxFrame int           // 0: MaxFrame
	// DropGarbled drops a frame that does not parse instead of breaking the
	// rail: the server's side, since anyone who learns a session's subject
	// can aim a broker-authored reply at it.
	DropGarbled bool
}

func (o RailOptions) withDefaults() RailOptions {
	if o.Idle <= 0 {
		o.Idle = DefaultIdle
	}
	if o.Stall <= 0 {
		o.Stall = DefaultStall
	}
	if o.MaxFrame <= 0 || o.MaxFrame > MaxFrame {
		o.MaxFrame = MaxFrame
	}
	return o
}

// RailStats is a rail's window state.
type RailStats struct {
	Sent         uint64 // frames sent (the last seq)
	AckedThrough uint64 // of those, acknowledged by the peer
	InFlight     uint64 // sent and not yet acknowledged
	Received     uint64 // frames received in order
	Delivered    uint64 // of those, handled
	Garbled      uint64 // frames dropped as unreadable (DropGarbled)
	Foreign      uint64 // messages dropped for carrying headers
}

// Rail is one side of a session: data frames out on one subject with a
// credit window, data frames in on the other, handled one at a time in
// order. Acks are absolute counts of frames handled, so credit means the
// receiver really made room (spec §12).
//
// Goroutines: the NATS callback decodes frames and queues data; deliver
// hands queued data to the handler; tick re-advertises credit and runs the
// stall watchdog. All three end when the rail closes (deliver after the
// handler in progress returns). mu guards the counters and serializes
// publishes, so seqs leave in order.
type Rail struct {
	nc      *nats.Conn
	out     string
	window  uint64
	every   uint64 // credit after this many frames handled
	opts    RailOptions
	handler func(json.RawMessage) error

	queue  chan json.RawMessage
	credit chan struct{} // signalled when the peer's ack advances
	done   chan struct{}
	sub    *nats.Subscription

	mu          sync.Mutex
	sent        uint64
	acked       uint64
	fullSince   time.Time // since when the window has been full, or short of a Reserve
	received    uint64
	delivered   uint64
	advertised  uint64
	sinceCredit uint64
	heard       time.Time
	spoke       bool // a frame went out since the last tick
	garbled     uint64
	foreign     uint64
	err         error
	ended       bool
	closing     bool // the peer's close arrived; ends once the queue is handled
}

// OpenRail subscribes to in, confirms the subscription with the broker,
// and starts the rail: frames go out on out with window frames of credit,
// and data arriving on in is handed to handler in order. A handler error
// breaks the rail (FaultHandler, or the fault a *FaultError names).
func OpenRail(ctx context.Context, nc *nats.Conn, out, in string, window int, handler func(json.RawMessage) error, opts RailOptions) (*Rail, error) {
	if window < 1 || window > MaxWindow {
		return nil, refuse(ErrInvalidGrant, "window %d is not in 1..%d", window, MaxWindow)
	}
	r := &Rail{
		nc: nc, out: out, window: uint64(window), every: uint64((window + 1) / 2),
		opts: opts.withDefaults(), handler: handler,
		queue:  make(chan json.RawMessage, window),
		credit: make(chan struct{}, 1),
		done:   make(chan struct{}),
		heard:  time.Now(),
	}
	sub, err := nc.Subscribe(in, r.receive)
	if err != nil {
		return nil, fmt.Errorf("attach: subscribing to the session: %w", err)
	}
	r.sub = sub
	if err := nc.FlushWithContext(ctx); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("attach: confirming the session subscription: %w", err)
	}
	go r.deliver()
	go r.tick()
	return r, nil
}

// Done is closed when the rail has closed.
func (r *Rail) Done() <-chan struct{} { return r.done }

// Err is why the rail closed: nil if this side closed it, ErrPeerClosed,
// or a *FaultError.
func (r *Rail) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// CreditReady is signalled (capacity one) whenever the peer acknowledges
// more frames; a sender refused with ErrWindowFull waits on it.
func (r *Rail) CreditReady() <-chan struct{} { return r.credit }

// Credit is how many data frames may be sent now.
func (r *Rail) Credit() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int(r.window - (r.sent - r.acked))
}

// Reserve reports whether n more frames fit in the window now. When they
// do not, the stall bound runs as it does with the window full, until the
// peer's ack moves: a sender that holds back for want of credit (a drop
// notice kept for when the screen after it fits too) is never left
// waiting on a peer that has stopped reading but still speaks.
func (r *Rail) Reserve(n int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if int(r.window-(r.sent-r.acked)) >= n {
		return true
	}
	if r.fullSince.IsZero() {
		r.fullSince = time.Now()
	}
	return false
}

// Window is the rail's window in frames.
func (r *Rail) Window() int { return int(r.window) }

// Stats reports the window state.
func (r *Rail) Stats() RailStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return RailStats{
		Sent: r.sent, AckedThrough: r.acked, InFlight: r.sent - r.acked,
		Received: r.received, Delivered: r.delivered, Garbled: r.garbled, Foreign: r.foreign,
	}
}

// Send sends data (one JSON value) as the next frame, carrying this side's
// ack. It refuses with ErrWindowFull when a window of frames is
// unacknowledged, ErrFrameTooLarge past MaxFrame, and ErrRailClosed once
// the rail is closed; nothing is sent then, and nothing is ever buffered.
func (r *Rail) Send(data []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return ErrRailClosed
	}
	if r.sent >= maxSafeInt-1 {
		r.faultLocked(FaultSeqExhausted, fmt.Sprintf("sent %d frames", r.sent))
		return ErrRailClosed
	}
	if r.sent-r.acked >= r.window {
		if r.fullSince.IsZero() {
			r.fullSince = time.Now()
		}
		return ErrWindowFull
	}
	buf := appendDataFrame(make([]byte, 0, len(data)+64), r.sent+1, r.delivered, data)
	if len(buf) > r.opts.MaxFrame {
		return fmt.Errorf("%w: %d bytes, over %d", ErrFrameTooLarge, len(buf), r.opts.MaxFrame)
	}
	if err := r.nc.Publish(r.out, buf); err != nil {
		r.faultLocked(FaultPublish, err.Error())
		return ErrRailClosed
	}
	r.sent++
	r.spoke = true
	r.advertised = max(r.advertised, r.delivered)
	r.sinceCredit = 0
	if r.sent-r.acked >= r.window && r.fullSince.IsZero() {
		r.fullSince = time.Now()
	}
	return nil
}

// Close sends the close frame and stops the rail. It is idempotent.
func (r *Rail) Close() {
	r.mu.Lock()
	if !r.ended {
		_ = r.nc.Publish(r.out, closeFrame) // advisory; the rail ends either way
	}
	sub := r.endLocked(nil)
	r.mu.Unlock()
	r.finish(sub)
}

// endLocked marks the rail ended with err, once, and returns the
// subscription to drop (nil if it had already ended). It needs mu.
func (r *Rail) endLocked(err error) *nats.Subscription {
	if r.ended {
		return nil
	}
	r.ended, r.err = true, err
	return r.sub
}

// finish releases what endLocked returned; it runs without mu, since
// Unsubscribe waits for nothing but may race the callback.
func (r *Rail) finish(sub *nats.Subscription) {
	if sub == nil {
		return
	}
	_ = sub.Unsubscribe()
	close(r.done)
}

// faultLocked breaks the rail; the subscription is dropped and done closed
// from a goroutine, since mu is held.
func (r *Rail) faultLocked(f Fault, detail string) {
	if sub := r.breakLocked(f, detail); sub != nil {
		go r.finish(sub)
	}
}

func (r *Rail) fault(f Fault, detail string) {
	r.mu.Lock()
	sub := r.breakLocked(f, detail)
	r.mu.Unlock()
	r.finish(sub)
}

// breakLocked ends the rail with a fault and tells the other side with
// the advisory close frame, so it re-establishes at once instead of
// finding out by its stall watchdog; not when publishing is what failed.
// It needs mu.
func (r *Rail) breakLocked(f Fault, detail string) *nats.Subscription {
	if !r.ended && f != FaultPublish {
		_ = r.nc.Publish(r.out, closeFrame)
	}
	return r.endLocked(&FaultError{Fault: f, Detail: detail})
}

// receive runs on the subscription's goroutine, one message at a time;
// it decodes before taking mu, so a large frame never holds up a sender.
func (r *Rail) receive(m *nats.Msg) {
	// Our peer never sends headers; a message with them was authored by the
	// broker for someone who aimed a reply subject here.
	foreign := len(m.Header) > 0
	var f frame
	err := errGarbled
	if !foreign && len(m.Data) <= r.opts.MaxFrame {
		f, err = decodeFrame(m.Data)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended || r.closing {
		return
	}
	if foreign {
		r.foreign++
		return
	}
	r.heard = time.Now()
	if err != nil {
		if r.opts.DropGarbled {
			r.garbled++
			return
		}
		r.faultLocked(FaultGarbled, err.Error())
		return
	}
	switch f.t {
	case frameClose:
		// What the peer sent before its close is still handled.
		r.closing = true
		if r.delivered == r.received {
			r.peerClosedLocked()
		}
		return
	case frameCredit:
		r.ackLocked(f.ack)
		return
	}
	if f.hasAck {
		if r.ackLocked(f.ack); r.ended {
			return
		}
	}
	next := r.received + 1
	switch {
	case f.seq < next:
		return // a repeat: acks are absolute, so it is harmless
	case f.seq > next:
		r.faultLocked(FaultGap, fmt.Sprintf("expected frame %d, got %d", next, f.seq))
		return
	case f.seq > r.advertised+r.window:
		r.faultLocked(FaultCreditOverrun, fmt.Sprintf("frame %d is past the credit given through %d", f.seq, r.advertised+r.window))
		return
	}
	select {
	case r.queue <- f.data:
		r.received = f.seq
	default:
		r.faultLocked(FaultFlood, fmt.Sprintf("%d frames already queued", len(r.queue)))
	}
}

func (r *Rail) peerClosedLocked() {
	if sub := r.endLocked(ErrPeerClosed); sub != nil {
		go r.finish(sub)
	}
}

// ackLocked takes the peer's absolute ack. It needs mu.
func (r *Rail) ackLocked(ack uint64) {
	if ack > r.sent {
		r.faultLocked(FaultCreditOverrun, fmt.Sprintf("ack %d for %d frames sent", ack, r.sent))
		return
	}
	if ack > r.acked {
		r.acked = ack
		r.fullSince = time.Time{}
		select {
		case r.credit <- struct{}{}:
		default:
		}
	}
}

// deliver hands queued data to the handler in order and gives credit back
// every ceil(window/2) frames handled.
func (r *Rail) deliver() {
	for {
		select {
		case <-r.done:
			return
		case data := <-r.queue:
			if err := r.handler(data); err != nil {
				var fe *FaultError
				if errors.As(err, &fe) {
					r.fault(fe.Fault, fe.Detail)
				} else {
					r.fault(FaultHandler, err.Error())
				}
				return
			}
			r.mu.Lock()
			r.delivered++
			r.sinceCredit++
			if r.sinceCredit >= r.every && !r.ended {
				r.sendCreditLocked()
			}
			if r.closing && r.delivered == r.received {
				r.peerClosedLocked()
			}
			r.mu.Unlock()
		}
	}
}

// sendCreditLocked advertises how many frames this side has handled. It
// needs mu.
func (r *Rail) sendCreditLocked() {
	if err := r.nc.Publish(r.out, encodeCredit(r.delivered)); err != nil {
		r.faultLocked(FaultPublish, err.Error())
		return
	}
	r.advertised = max(r.advertised, r.delivered)
	r.sinceCredit = 0
	r.spoke = true
}

// tick re-advertises credit whenever a whole idle interval passed with no
// frame sent, so a lost credit heals and the peer always hears this side,
// and breaks the rail when the peer has been silent, or has left the
// window full, for the stall bound.
func (r *Rail) tick() {
	t := time.NewTicker(r.opts.Idle)
	defer t.Stop()
	for {
		select {
		case <-r.done:
			return
		case now := <-t.C:
			r.mu.Lock()
			switch {
			case r.ended:
			case now.Sub(r.heard) > r.opts.Stall:
				r.faultLocked(FaultStall, fmt.Sprintf("nothing from the other side for %s", now.Sub(r.heard).Round(time.Millisecond)))
			case !r.fullSince.IsZero() && now.Sub(r.fullSince) > r.opts.Stall:
				r.faultLocked(FaultStall, fmt.Sprintf("no credit for %s with the window full or short of what waits", now.Sub(r.fullSince).Round(time.Millisecond)))
			case !r.spoke:
				r.sendCreditLocked()
			}
			r.spoke = false
			r.mu.Unlock()
		}
	}
}
