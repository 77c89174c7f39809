package attach

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// Terminal is what a server session needs from a seat; *pty.Seat
// satisfies it.
type Terminal interface {
	// SubscribeScreen returns bytes that repaint the current screen and,
	// from exactly that point, every later chunk of output. The channel is
	// closed when the output ends or when the subscriber falls behind; the
	// terminal never waits for it.
	SubscribeScreen() (screen string, chunks <-chan []byte, cancel func())
	// Write types p into the program.
	Write(p []byte) (int, error)
	// Resize sets the terminal's size.
	Resize(cols, rows int) error
	// Running reports whether the process still runs.
	Running() bool
	// Done is closed once the process exited and its output is drained.
	Done() <-chan struct{}
	// SetAnswerQueries says whether the seat answers terminal queries
	// itself; off while a person's terminal is attached and answers them.
	SetAnswerQueries(on bool)
}

// snapshotPiece is the most screen bytes one frame carries; base64 and the
// framing keep the frame well under MaxFrame.
const snapshotPiece = 512 << 10

// DefaultEndGrace bounds how long a session waits for credit to send its
// end payload.
const DefaultEndGrace = 2 * time.Second

// ServerOptions tune a server session.
type ServerOptions struct {
	Rail     RailOptions
	EndGrace time.Duration // 0: DefaultEndGrace
}

// Stats are one session's counters, for ps and the dashboard.
type Stats struct {
	ID           string // the first 8 characters of the session id; the whole id is never shown
	Target       string // the seat's name
	Holder       Holder
	Since        time.Time
	Live         bool
	BytesOut     int64  // terminal bytes sent to the holder (repaints included)
	BytesIn      int64  // bytes the holder typed that the seat accepted
	Dropped      int64  // output bytes dropped for want of credit
	Repaints     int64  // screens sent: the first, each ready, and each after a drop
	Garbled      int64  // frames and payloads from the holder dropped as unreadable
	Foreign      int64  // messages dropped for carrying headers (broker-authored)
	Frames       uint64 // frames sent
	AckedThrough uint64
	InFlight     uint64
	Ended        Reason // once not Live
	Fault        string // the rail's fault, if that ended it
}

// Server is the seat's side of one session: it sends the seat's screen and
// output to the holder within the credit window, and types what the
// holder sends into the seat. Output without credit is dropped and
// counted, never waited for: the seat never blocks on a session.
//
// Goroutines: pump owns the output state (subscription, repaint, pending
// drop count) and is the only sender of data frames, so a credit check
// followed by a send cannot race; the rail's deliver goroutine runs
// handleIn. Counters are atomic.
type Server struct {
	grant  Grant
	target string
	term   Terminal
	rail   *Rail
	opts   ServerOptions
	since  time.Time

	ready  chan struct{} // capacity one: the holder asked for a repaint
	joined chan struct{} // closed at the holder's first ready: its rail hears the server
	join   sync.Once
	stop   chan Reason   // capacity one: End was called
	done   chan struct{} // closed when pump has finished
	ended  atomic.Value  // Reason

	bytesOut, bytesIn, dropped, repaints atomic.Int64
	garbledIn                            atomic.Int64

	sizes    *sizes // the seat's size rule across its sessions; nil: this session alone sets it
	sizeMu   sync.Mutex
	sizeView sizeView // what this session is told of sizes (sizes.go)
	sizeTold bool     // its holder was last told of other terminals
}

// serve starts a server session for an active grant.
func serve(ctx context.Context, nc *nats.Conn, g Grant, target string, term Terminal, opts ServerOptions, sz *sizes) (*Server, error) {
	if opts.EndGrace <= 0 {
		opts.EndGrace = DefaultEndGrace
	}
	opts.Rail.DropGarbled = true
	s := &Server{
		grant: g, target: target, term: term, opts: opts, since: time.Now(),
		ready:  make(chan struct{}, 1),
		joined: make(chan struct{}),
		stop:   make(chan Reason, 1),
		done:   make(chan struct{}),
		sizes:  sz,
	}
	r, err := OpenRail(ctx, nc, g.Subjects.Out, g.Subjects.In, g.Window, s.handleIn, opts.Rail)
	if err != nil {
		return nil, err
	}
	s.rail = r
	go s.pump()
	return s, nil
}

// Done is closed when the session has ended and its rail is closed.
func (s *Server) Done() <-chan struct{} { return s.done }

// End ends the session with reason: the holder gets an end payload (if
// credit allows within the end grace) and the rail closes. It returns
// once the session has ended.
func (s *Server) End(reason Reason) {
	select {
	case s.stop <- reason:
	default:
	}
	<-s.done
}

// Reason is why the session ended; empty while it is live.
func (s *Server) Reason() Reason {
	r, _ := s.ended.Load().(Reason)
	return r
}

// Stats reports the session's counters.
func (s *Server) Stats() Stats {
	rs := s.rail.Stats()
	st := Stats{
		ID: s.grant.SessionID[:8], Target: s.target, Holder: s.grant.Holder, Since: s.since,
		BytesOut: s.bytesOut.Load(), BytesIn: s.bytesIn.Load(), Dropped: s.dropped.Load(), Repaints: s.repaints.Load(),
		Frames: rs.Sent, AckedThrough: rs.AckedThrough, InFlight: rs.InFlight,
		Garbled: s.garbledIn.Load() + int64(rs.Garbled), Foreign: int64(rs.Foreign),
		Ended: s.Reason(),
	}
	st.Live = st.Ended == ""
	var fe *FaultError
	if errors.As(s.rail.Err(), &fe) {
		st.Fault = string(fe.Fault)
	}
	return st
}

// handleIn runs on the rail's deliver goroutine, so the holder's input is
// written in the order it was sent. A payload it cannot read is dropped
// and the session goes on (spec: garbled caller frames are just dropped).
func (s *Server) handleIn(raw json.RawMessage) error {
	p, err := decodePayload(raw)
	if err != nil {
		s.garbledIn.Add(1)
		return nil
	}
	switch p.kind {
	case kindData:
		n, _ := s.term.Write(p.b) // a write to an exited seat is moot: its end follows
		s.bytesIn.Add(int64(n))
	case kindReady:
		s.join.Do(func() { close(s.joined) })
		select {
		case s.ready <- struct{}{}:
		default:
		}
	case kindResize:
		if s.sizes != nil {
			s.sizes.set(s.term, s, p.cols, p.rows)
		} else {
			_ = s.term.Resize(p.cols, p.rows) // out of the seat's range: ignored, as a terminal would
		}
	default:
		s.garbledIn.Add(1) // end and drop are the server's to send
	}
	return nil
}

// output is pump's state; only pump touches it.
type output struct {
	chunks      <-chan []byte // nil until the first ready, and while a repaint is pending or sending
	cancel      func()
	got         int      // chunks read on this subscription
	repaint     bool     // a fresh screen is owed to the holder
	pieces      [][]byte // screen payloads still to send, in order
	pendingDrop int64    // bytes dropped since the last drop payload landed

	painted time.Time        // when the last screen was taken
	redraw  <-chan time.Time // a redraw of a larger holder's screen is due (sizes.go)
}

func (s *Server) pump() {
	o := &output{}
	defer func() {
		if o.cancel != nil {
			o.cancel()
		}
		close(s.done)
	}()
	expiry := time.NewTimer(time.Until(s.grant.Expires()))
	defer expiry.Stop()
	termDone := s.term.Done()
	for {
		chunks := o.chunks
		if len(o.pieces) > 0 {
			chunks = nil // the screen goes first; the seat holds what follows
		}
		select {
		case <-o.redraw:
			o.redraw = nil
			s.flush(o)
		case <-s.ready:
			o.repaint = true
			s.flush(o)
		case <-s.rail.CreditReady():
			s.flush(o)
		case c, ok := <-chunks:
			if !ok {
				s.closedChunks(o)
				break
			}
			o.got++
			c, closed := o.gather(c)
			s.chunk(o, c)
			if closed {
				s.closedChunks(o)
			}
		case <-termDone:
			termDone = nil
			if o.chunks == nil || len(o.pieces) > 0 {
				s.finish(o, ReasonProcessExit)
				return
			}
			// Drain what the seat wrote last; the channel closes after it.
		case r := <-s.stop:
			s.finish(o, r)
			return
		case <-expiry.C:
			s.finish(o, ReasonExpired)
			return
		case <-s.rail.Done():
			s.ended.Store(ReasonClosed)
			return
		}
		if termDone == nil && o.chunks == nil {
			s.finish(o, ReasonProcessExit)
			return
		}
	}
}

// closedChunks handles the end of a subscription: the output ended, or
// the session fell behind the seat and owes the holder a repaint. pump
// finishes once Done has fired and no subscription is left.
func (s *Server) closedChunks(o *output) {
	got := o.got
	o.chunks, o.got = nil, 0
	if o.cancel != nil {
		o.cancel()
		o.cancel = nil
	}
	select {
	case <-s.term.Done():
		return // all output came through; pump finishes
	default:
	}
	switch {
	case got == 0:
		// A fresh subscription closed at once: the output has ended, and
		// Done follows.
	case !s.term.Running():
		// Ended, or fell behind while the seat drains its last output:
		// the final screen, taken once Done, settles it either way.
		o.repaint = true
	default:
		o.repaint = true
		s.flush(o)
	}
}

// gatherBytes bounds the output gather joins into one data frame: with
// base64 and the frame around it, well under the rail's 1 MiB.
const gatherBytes = 256 << 10

// gather joins to c the chunks already waiting on the subscription, up to
// gatherBytes, without waiting for any: a flood then travels in fewer and
// larger frames, and the credit window covers more of it, so less is
// dropped. closed reports that the subscription ended meanwhile. The
// seat's chunks are shared with its other subscribers, so a join is a
// fresh slice.
func (o *output) gather(c []byte) (joined []byte, closed bool) {
	joined = c
	for len(joined) < gatherBytes {
		select {
		case more, ok := <-o.chunks:
			if !ok {
				return joined, true
			}
			o.got++
			if len(joined) == len(c) {
				joined = append(make([]byte, 0, gatherBytes+len(more)), c...)
			}
			joined = append(joined, more...)
		default:
			return joined, false
		}
	}
	return joined, false
}

// chunk sends one chunk of output, or drops and counts it. A holder
// larger than the seat gets the seat's screen redrawn instead (sizes.go).
func (s *Server) chunk(o *output, c []byte) {
	if s.redraws(o) {
		return
	}
	if o.repaint {
		s.flush(o)
		if !o.repaint {
			return // the fresh screen already shows c
		}
		s.drop(o, c)
		return
	}
	s.flush(o)
	if err := s.rail.Send(encodeData(c)); err != nil {
		s.drop(o, c)
		return
	}
	s.bytesOut.Add(int64(len(c)))
}

// drop counts c as dropped; the holder is owed a drop payload and, since
// its screen is now wrong, a repaint.
func (s *Server) drop(o *output, c []byte) {
	o.pendingDrop += int64(len(c))
	s.dropped.Add(int64(len(c)))
	o.repaint = true
}

// flush sends what is owed, as far as credit allows: the drop count first
// (reset only once it lands), then a fresh screen taken together with a
// new subscription, in pieces. The old subscription is dropped with what
// it still queued: SubscribeScreen's screen and channel together cover
// every byte after the screen, so nothing is shown twice or lost.
func (s *Server) flush(o *output) {
	if o.pendingDrop > 0 {
		// Only with room for the screen after it, so a drop is always
		// followed by output rather than by another drop.
		if !s.rail.Reserve(min(2, s.rail.Window())) || s.rail.Send(encodeDrop(o.pendingDrop)) != nil {
			return
		}
		o.pendingDrop = 0
	}
	if o.repaint && len(o.pieces) == 0 && s.rail.Credit() > 0 {
		screen, ch, cancel := s.term.SubscribeScreen()
		if o.cancel != nil {
			o.cancel()
		}
		o.chunks, o.cancel, o.got, o.repaint = ch, cancel, 0, false
		o.painted = time.Now()
		s.repaints.Add(1)
		for len(screen) > 0 {
			n := min(len(screen), snapshotPiece)
			o.pieces = append(o.pieces, encodeData([]byte(screen[:n])))
			s.bytesOut.Add(int64(n))
			screen = screen[n:]
		}
		if note := s.sizeNotice(); len(note) > 0 {
			o.pieces = append(o.pieces, encodeData(note))
			s.bytesOut.Add(int64(len(note)))
		}
	}
	for len(o.pieces) > 0 {
		if s.rail.Send(o.pieces[0]) != nil {
			return
		}
		o.pieces = o.pieces[1:]
	}
}

// finish sends what it can of the last output and the end payload, waiting
// for credit at most the end grace, and closes the rail. When the process
// exited with output still unread (a screen was being sent), the holder
// gets the final screen instead.
func (s *Server) finish(o *output, reason Reason) {
	s.ended.Store(reason)
	if reason == ReasonProcessExit && o.chunks != nil {
		o.repaint = true
	}
	deadline := time.NewTimer(s.opts.EndGrace)
	defer deadline.Stop()
	// A holder that has not said ready yet may not be subscribed to its
	// side of the rail: an end sent now could land on nobody, and the
	// holder would wait out its stall bound in front of a blank screen.
	// Its ready follows its subscription, so the end waits for it, within
	// the grace.
	select {
	case <-s.joined:
	case <-s.rail.Done():
		return
	case <-deadline.C:
		s.rail.Close()
		return
	}
	end := encodeEnd(reason)
	for {
		s.flush(o)
		if len(o.pieces) == 0 && o.pendingDrop == 0 && !o.repaint {
			if err := s.rail.Send(end); !errors.Is(err, ErrWindowFull) {
				break
			}
		}
		select {
		case <-s.rail.CreditReady():
		case <-s.rail.Done():
			return
		case <-deadline.C:
			s.rail.Close()
			return
		}
	}
	s.rail.Close()
}
