package pty

import (
	"io"
	"runtime"
	"syscall"
	"time"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/sys/unix"
)

// subscriber is one raw output fan-out. Its channel is closed when the seat's
// output ends, when it unsubscribes, or when it falls subscriberBuffer chunks
// behind (lagging): the seat never waits for a subscriber.
type subscriber struct {
	ch chan []byte
}

// pump copies the pty's output to the subscribers and the emulator's queue
// until the stream ends: EIO once the child side of the pty is closed (Linux
// reports the end of a pty's output as EIO, not EOF), os.ErrClosed after
// Close, or the drain deadline set by reap. Each chunk it hands on ends at
// a clean edge (see modeScanner); what it kept back of the last read goes
// out as it is when the stream ends.
func (s *Seat) pump() {
	defer close(s.pumpDone)
	buf := make([]byte, readBufSize)
	var err error
	for err == nil {
		var n int
		var paint bool
		n, paint, err = s.c.read(buf)
		if n > 0 {
			s.observe(buf[:n], paint)
			// Under a flood the pty is never empty, so the pump would not
			// block: give the subscribers it woke a turn.
			runtime.Gosched()
		}
	}
	rest := s.scan.rest()
	s.mu.Lock()
	if len(rest) > 0 {
		s.hand(rest, nil, nil)
	}
	s.drained = true
	for sub := range s.subs {
		close(sub.ch)
	}
	clear(s.subs)
	// The screen is wanted final now: after a flood, draw it from the
	// newest output rather than draw all that is queued.
	if s.queuedCost > catchUpLag {
		s.skip(maxQueueBytes, catchUpKeep)
	}
	s.wake.Signal()
	s.mu.Unlock()
}

// observe takes one read: its output up to the last clean edge goes to the
// subscribers and the emulator's queue, the rest is kept back for the next.
// A paint is drawn the same way but is no output of the program's: the
// output times stay as they were.
func (s *Seat) observe(p []byte, paint bool) {
	if !paint {
		s.lastOutput.Store(time.Now().UnixNano())
		s.firstOnce.Do(func() { close(s.firstOutput) })
	}
	var chunk []byte
	chunk, s.events, s.queries = s.scan.scan(p, s.events[:0], s.queries[:0])
	if len(chunk) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hand(chunk, s.events, s.queries)
}

// hand gives chunk to every subscriber at once and queues it for the
// emulator, with the mode changes and queries it holds; it needs mu.
func (s *Seat) hand(chunk []byte, events []modeEvent, queries []byte) {
	for sub := range s.subs {
		select {
		case sub.ch <- chunk:
		default:
			close(sub.ch)
			delete(s.subs, sub)
		}
	}
	if len(events) > 0 {
		s.term = s.term.with(events)
	}
	e := &entry{p: chunk, after: s.term}
	e.cost, e.lines = estimate(chunk, s.term.cols, s.term.rows)
	if len(queries) > 0 {
		e.queries = append([]byte(nil), queries...)
	}
	s.push(e)
}

// readChunk reads what the pty has, up to len(buf): it waits for the
// first bytes, then takes whatever else is there already without waiting,
// so a flood comes in full buffers rather than in the line discipline's
// 4 KiB pieces, and each piece costs the subscribers and the emulator's
// queue once. Through the runtime poller, so Close and the read deadline
// end a wait.
func readChunk(rc syscall.RawConn, buf []byte) (int, error) {
	n := 0
	var rerr error
	err := rc.Read(func(fd uintptr) bool {
		for n < len(buf) {
			m, err := unix.Read(int(fd), buf[n:])
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				return n > 0 // nothing yet: wait for the poller
			case err != nil:
				rerr = err
				return true
			case m == 0:
				rerr = io.EOF
				return true
			}
			n += m
		}
		return true
	})
	if rerr != nil {
		err = rerr
	}
	return n, err
}

// drainQueries reads the emulator's answers to terminal queries (cursor
// position, device attributes, ...). x/vt writes them into an unbuffered
// pipe while it parses output, so without this reader the emulator, and with
// it the whole seat, would block at the first query. The answers are handed
// to writeAnswers, never written here, so a pty whose input is full cannot
// stall the output side; when the queue is full they are dropped.
//
// It reads the emulator without emuMu: Read touches only the pipe and the
// emulator's closed flag, which this package never sets (closeAnswerPipe
// closes the pipe's writer instead of calling Emulator.Close).
func (s *Seat) drainQueries() {
	defer close(s.answers)
	<-s.emuReady
	buf := make([]byte, 256)
	for {
		n, err := s.emu.Read(buf)
		if n > 0 && s.answer.Load() && !s.restoring.Load() && s.c.answers() {
			select {
			case s.answers <- append([]byte(nil), buf[:n]...):
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// closeAnswerPipe ends drainQueries once nothing writes to the emulator.
func (s *Seat) closeAnswerPipe() {
	s.answerClosed.Do(func() {
		<-s.emuReady
		if c, ok := s.emu.InputPipe().(io.Closer); ok {
			_ = c.Close()
		}
	})
}

// SetAnswerQueries says whether the emulator's answers to terminal queries
// are forwarded to the program. It is on from Start; switch it off while a
// person's terminal is attached, since that terminal answers instead.
// A remote seat tells its holder, whose emulator answers instead of this
// one.
func (s *Seat) SetAnswerQueries(on bool) {
	s.answer.Store(on)
	s.c.setAnswers(on)
}

// bracketedPaste reports whether the program has asked for bracketed
// paste, as of the output read so far (not as drawn).
func (s *Seat) bracketedPaste() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.term.on(ansi.ModeBracketedPaste)
}

// AltScreen reports whether the program is on the alternate screen (a
// full-screen program: an editor, a pager, top), as of the output read so
// far.
func (s *Seat) AltScreen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.term.on(ansi.ModeAltScreen) || s.term.on(ansi.ModeAltScreenSaveCursor) || s.term.on(1047) || s.term.on(47)
}

// Size is the terminal's current size.
func (s *Seat) Size() (cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.term.cols, s.term.rows
}

// Subscribe returns every byte of output from now on, in order, and a
// function that ends the subscription. The chunks are shared: do not modify
// them. Each ends between whole escape sequences and UTF-8 characters: an
// unfinished one is kept back until the next output or the end (unless it
// runs past 4 KiB), so a chunk may start with bytes read before the call. The seat never waits for a subscriber: one that falls more than 256
// chunks behind is dropped and its channel closed. A channel closed while
// Done is still open therefore means "lagging": resubscribe and repaint with
// SubscribeScreen. After the output ends every channel is closed.
func (s *Seat) Subscribe() (<-chan []byte, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subscribe(nil)
}

// subscribe starts a subscription with first queued ahead of the output
// from now on; it needs mu.
func (s *Seat) subscribe(first [][]byte) (<-chan []byte, func()) {
	sub := &subscriber{ch: make(chan []byte, len(first)+subscriberBuffer)}
	for _, p := range first {
		sub.ch <- p
	}
	if s.drained {
		close(sub.ch)
		return sub.ch, func() {}
	}
	s.subs[sub] = struct{}{}
	return sub.ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.subs[sub]; ok {
			delete(s.subs, sub)
			close(sub.ch)
		}
	}
}
