package pty

import (
	"bytes"
	"runtime"
	"slices"
	"time"
)

// The emulator draws a line in tens of µs, far slower than a program can
// write, so it is fed from a queue by its own goroutine (mirror) and the
// pump never waits for it. The queue is bounded by what it holds and by an
// estimate of the emulator's time to draw it; past either bound the oldest
// queued output is skipped for the emulator (subscribers still get every
// byte), the emulator is reset to the terminal state the skipped output
// left, and the newest output is drawn. Variables so a test can change
// them.
var (
	maxQueueBytes = 8 << 20
	maxQueueLag   = 100 * time.Millisecond
)

// The estimate of the emulator's time for a chunk: each scrolled line
// moves every cell of the screen, and each byte is parsed. Measured on
// x/vt v0.1.0: 7µs a line at 80x24 and 12µs at 120x32 for `seq` output,
// 18µs for 79-character lines at 120x32.
const (
	cellCost = 3 * time.Nanosecond
	byteCost = 60 * time.Nanosecond
)

// While output comes faster than the emulator draws it, the emulator
// rests floodRest times as long as it drew, so a flood keeps no core busy
// drawing what will mostly be skipped; behindLag is how far behind counts
// as a flood. When the screen is wanted now (a SubscribeScreen, or the
// end of the output) and the emulator is more than catchUpLag behind, it
// skips all but the newest catchUpKeep.
var (
	floodRest   = 3
	behindLag   = 25 * time.Millisecond
	catchUpLag  = 10 * time.Millisecond
	catchUpKeep = 5 * time.Millisecond
)

// maxGapQueries bounds the queries carried over skipped output.
const maxGapQueries = 4 << 10

// entry is one step of the emulator's queue: a chunk of output, or a
// resize when p is nil.
type entry struct {
	seq     uint64
	p       []byte
	after   *termState // the size and modes once this entry is drawn
	queries []byte     // the terminal queries in p, answered even if p is skipped
	cost    time.Duration
	lines   int  // the lines p takes on the screen, at most: newlines or wraps
	reset   *gap // output before this entry was skipped
}

// gap is output skipped for the emulator: the state it left the terminal
// in and the queries it asked.
type gap struct {
	state   *termState
	queries []byte
}

// push queues e for the emulator and enforces the bound; it needs mu.
func (s *Seat) push(e *entry) {
	s.seq++
	e.seq = s.seq
	s.queue = append(s.queue, e)
	s.queuedBytes += len(e.p)
	s.queuedCost += e.cost
	if s.queuedBytes > maxQueueBytes || s.queuedCost > maxQueueLag {
		s.skip(maxQueueBytes/2, maxQueueLag/2)
	}
	s.wake.Signal()
}

// skip drops queued output, oldest first, until the queue is down to
// bytes and lag. It never drops the newest entry, which carries the gap,
// and below the byte bound it keeps two screens of the newest output, so
// the screen drawn after the skip is whole. While a SubscribeScreen
// waits for the emulator to draw a resize it drops nothing, since its
// subscription will start with what is queued after the resize, up to a
// hard bound of twice maxQueueBytes and then only after that place. A
// waiter whose resize is drawn is moved on to the newest resize not drawn
// yet, if any (see serve): while resizes keep coming faster than the
// emulator reaches them it keeps waiting, until they stop or the emulator
// ends (all the output drawn, or Close). It needs mu.
func (s *Seat) skip(bytes int, lag time.Duration) {
	q := s.queue
	i := 0
	var last uint64 // the last entry a waiter needs drawn
	for _, w := range s.waiters {
		if !w.bare {
			last = max(last, w.at)
		}
	}
	if last > 0 {
		if s.queuedBytes <= 2*maxQueueBytes {
			return
		}
		for i < len(q) && q[i].seq <= last {
			i++
		}
	}
	// Keep two screens' worth of the newest output, so the screen drawn
	// after the skip is whole; only the byte bound overrides that.
	stop, lines := len(q)-1, 0
	for ; stop > 0 && lines < 2*s.term.rows; stop-- {
		lines += q[stop].lines
	}
	j := i
	var g gap
	for j < len(q)-1 && (s.queuedBytes > bytes || s.queuedCost > lag && j < stop) {
		e := q[j]
		if e.reset != nil {
			g.queries = append(g.queries, e.reset.queries...)
		}
		g.queries = append(g.queries, e.queries...)
		s.queuedBytes -= len(e.p)
		s.queuedCost -= e.cost
		s.skipped.Add(int64(len(e.p)))
		j++
	}
	if j <= i {
		return
	}
	next := q[j]
	if next.reset != nil {
		g.queries = append(g.queries, next.reset.queries...)
	}
	g.queries = newestQueries(g.queries, maxGapQueries)
	g.state = q[j-1].after
	next.reset = &g
	s.queue = slices.Delete(q, i, j)
}

// mirror feeds the queue to the emulator until the output has ended and
// all of it is drawn, or Close discards it.
func (s *Seat) mirror() {
	defer close(s.mirrorDone)
	s.setEmulator(s.shown.cols, s.shown.rows) // nobody reads shown before emuReady
	var e *entry
	for {
		e = s.next(e)
		if e == nil {
			return
		}
		t0 := time.Now()
		s.draw(e)
		if d := time.Since(t0); s.behind() {
			rest := time.NewTimer(time.Duration(floodRest) * d)
			select {
			case <-rest.C:
			case <-s.poke:
				rest.Stop()
			}
		} else {
			// let the subscribers the pump woke run before the next entry
			runtime.Gosched()
		}
	}
}

// next records that drawn was drawn, serves the waiters due at that
// place, and returns the next entry; nil when there is none and will be
// none.
func (s *Seat) next(drawn *entry) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if drawn != nil {
		s.drawn = drawn.seq
		s.inflight = nil
		s.tellRedrawn()
	}
	for {
		if w := s.due(); w != nil {
			s.serve(w)
			continue
		}
		if s.discard || (s.drained && len(s.queue) == 0) {
			s.mirrorEnded = true
			s.tellRedrawn()
			for len(s.waiters) > 0 { // only after a discard: nothing more is drawn
				s.waiters[0].at = s.drawn
				s.serve(s.due())
			}
			return nil
		}
		if len(s.queue) > 0 {
			e := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.queuedBytes -= len(e.p)
			s.queuedCost -= e.cost
			s.inflight = e
			return e
		}
		s.wake.Wait()
	}
}

// draw feeds e to the emulator. Its Write may block on the answer pipe
// until drainQueries reads it, which is why mu is never held here.
func (s *Seat) draw(e *entry) {
	s.lockEmu()
	defer s.emuMu.Unlock()
	if e.reset != nil {
		s.restart(e.reset)
	}
	if e.p == nil {
		if s.emu.Width() != e.after.cols || s.emu.Height() != e.after.rows {
			s.emu.Resize(e.after.cols, e.after.rows)
		}
	} else {
		_, _ = s.emu.Write(s.guard.filter(e.p))
	}
	s.shown = e.after
	s.shownSeq = e.seq
	s.drawGen++
}

// restart resets the emulator to the state skipped output left: CAN ends
// any sequence the parser is inside, RIS clears the screens and modes
// (scrollback stays), then the size, the modes and the queries the skipped
// output asked, which the emulator answers from its reset state. What the
// emulator answers to anything but those queries (setting in-band resize
// reports, 2048, sends one) is dropped: the program did not ask for it.
// It needs emuMu.
func (s *Seat) restart(g *gap) {
	s.restoring.Store(true)
	s.guard.reset()
	_, _ = s.emu.Write([]byte("\x18\x1bc"))
	if s.emu.Width() != g.state.cols || s.emu.Height() != g.state.rows {
		s.emu.Resize(g.state.cols, g.state.rows)
	}
	_, _ = s.emu.Write(g.state.restore())
	// The answer pipe is unbuffered and an empty write returns only once
	// drainQueries reads again, so by then it has dropped every answer
	// to the above.
	_, _ = s.emu.InputPipe().Write(nil)
	s.restoring.Store(false)
	if len(g.queries) > 0 {
		_, _ = s.emu.Write(g.queries)
	}
}

// newestQueries is the newest whole queries in q that fit in limit bytes.
func newestQueries(q []byte, limit int) []byte {
	if len(q) <= limit {
		return q
	}
	q = q[len(q)-limit:]
	for i := 0; i+1 < len(q); i++ {
		if q[i] == 0x1b && (q[i+1] == '[' || q[i+1] == ']') {
			return q[i:]
		}
	}
	return nil
}

// behind reports whether the emulator is well behind output that is
// still coming, and nobody waits for it.
func (s *Seat) behind() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.drained && !s.discard && len(s.waiters) == 0 && s.queuedCost > behindLag
}

// Skipped is how many bytes of output were never drawn on the emulator's
// screen because the program wrote faster than the emulator could draw.
// Subscribers got them all; the screen was drawn again from later output.
func (s *Seat) Skipped() int64 { return s.skipped.Load() }

// estimate is the emulator's time to draw p on a cols x rows screen, and
// the lines p takes on it at most.
func estimate(p []byte, cols, rows int) (time.Duration, int) {
	lines := max(bytes.Count(p, []byte{'\n'}), len(p)/cols)
	return time.Duration(lines*cols*rows)*cellCost + time.Duration(len(p))*byteCost, lines
}
