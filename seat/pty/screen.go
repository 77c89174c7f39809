package pty

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// screenWaiter is a SubscribeScreen (or, bare, a settle) waiting for the
// emulator to have drawn the entries up to at.
type screenWaiter struct {
	at   uint64
	bare bool
	done chan screenSub
}

// screenSub is what SubscribeScreen returns.
type screenSub struct {
	screen string
	ch     <-chan []byte
	cancel func()
}

// SubscribeScreen is ScreenANSI and Subscribe taken at the same instant:
// the screen is drawn from exactly the output before the chunks, so a
// viewer that paints the screen and then the chunks misses nothing and
// sees nothing twice. The channel behaves as Subscribe's. The emulator
// draws behind the output, so the screen may be a little older than the
// call: the channel then starts with the output it had not drawn yet. When
// it is more than catchUpLag behind (a flood), it first skips all but the
// newest catchUpKeep of that, as it would if it fell further behind; when
// output was skipped, the screen is the blank one the emulator restarts
// from (see Skipped) and the channel starts with what followed. Only a
// resize the emulator has not drawn yet makes it wait, for the emulator to
// draw up to it.
func (s *Seat) SubscribeScreen() (string, <-chan []byte, func()) {
	s.lockEmu()
	s.mu.Lock()
	if s.queuedCost > catchUpLag {
		s.skip(maxQueueBytes, catchUpKeep)
	}
	replay, blank, wait := s.here(s.inflight)
	if wait == 0 {
		ch, cancel := s.subscribe(replay)
		s.mu.Unlock()
		defer s.emuMu.Unlock()
		if blank != nil {
			return blank.blankANSI(), ch, cancel
		}
		return s.screenANSI(), ch, cancel
	}
	s.emuMu.Unlock()
	w := s.addWaiter(wait, false)
	s.mu.Unlock()
	r := <-w.done
	return r.screen, r.ch, r.cancel
}

// here is where a subscription taken now meets the emulator: the output it
// has still to draw (inflight, if not drawn yet, then the queue), from the
// last skip in it if any, with the state that skip left. A resize after
// that cannot be told by chunks: wait is then the entry to wait for. It
// needs mu, and the emulator held still (emuMu, or mirror between
// entries).
func (s *Seat) here(inflight *entry) (replay [][]byte, blank *termState, wait uint64) {
	add := func(e *entry) {
		if e.seq <= s.shownSeq {
			return
		}
		if e.reset != nil {
			replay, blank, wait = replay[:0], e.reset.state, 0
		}
		if e.p == nil {
			wait = e.seq
			return
		}
		replay = append(replay, e.p)
	}
	if inflight != nil {
		add(inflight)
	}
	for _, e := range s.queue {
		add(e)
	}
	return replay, blank, wait
}

// addWaiter registers a waiter for the emulator to have drawn up to at;
// it needs mu.
func (s *Seat) addWaiter(at uint64, bare bool) *screenWaiter {
	w := &screenWaiter{at: at, bare: bare, done: make(chan screenSub, 1)}
	s.waiters = append(s.waiters, w)
	s.wake.Signal()
	select { // end a rest
	case s.poke <- struct{}{}:
	default:
	}
	return w
}

// due takes a waiter whose place the emulator has reached; it needs mu.
func (s *Seat) due() *screenWaiter {
	for i, w := range s.waiters {
		if w.at <= s.drawn {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			return w
		}
	}
	return nil
}

// serve answers w, called by mirror with mu held and the emulator at w's
// place (a resize): the subscription starts with the output queued since.
func (s *Seat) serve(w *screenWaiter) {
	if w.bare {
		close(w.done)
		return
	}
	replay, blank, wait := s.here(nil)
	if wait > s.drawn && !s.mirrorEnded {
		w.at = wait
		s.waiters = append(s.waiters, w)
		return
	}
	var r screenSub
	r.ch, r.cancel = s.subscribe(replay)
	s.mu.Unlock()
	if blank != nil {
		r.screen = blank.blankANSI()
	} else {
		r.screen = s.ScreenANSI()
	}
	s.mu.Lock()
	w.done <- r
}

// WaitScreen waits until the screen as text satisfies match, the
// emulator has drawn everything there will be, or ctx ends; it returns the
// last screen it looked at and whether that one matched. It looks once
// now and again after each entry the emulator draws, so nothing polls.
func (s *Seat) WaitScreen(ctx context.Context, match func(string) bool) (string, bool) {
	for {
		s.mu.Lock()
		ended := s.mirrorEnded
		if s.redrawn == nil {
			s.redrawn = make(chan struct{})
		}
		redrawn := s.redrawn
		s.mu.Unlock()
		text := s.Screen()
		if match(text) {
			return text, true
		}
		if ended {
			return text, false
		}
		select {
		case <-redrawn:
		case <-ctx.Done():
			return text, false
		}
	}
}

// tellRedrawn wakes the WaitScreen callers; it needs mu.
func (s *Seat) tellRedrawn() {
	if s.redrawn != nil {
		close(s.redrawn)
		s.redrawn = nil
	}
}

// Screen is the emulator's screen as plain text: one line per row,
// trailing spaces trimmed, trailing empty lines dropped. The emulator
// draws behind the output, so it may not show the newest output yet (it
// never shows a chunk half drawn); once Done it shows all of it, less any
// skipped.
// Asked again before the emulator changed, it returns the text it made
// (WaitScreen callers and pollers share one rendering per change).
func (s *Seat) Screen() string {
	s.lockEmu()
	defer s.emuMu.Unlock()
	gen := s.drawGen + 1 // textGen 0 is none
	if s.textGen != gen {
		s.text, s.textGen = strings.Join(s.linesLocked(), "\n"), gen
	}
	return s.text
}

func (s *Seat) lines() []string {
	s.lockEmu()
	defer s.emuMu.Unlock()
	return s.linesLocked()
}

// linesLocked needs emuMu.
func (s *Seat) linesLocked() []string {
	w, h := s.emu.Width(), s.emu.Height()
	lines := make([]string, h)
	var b strings.Builder
	b.Grow(w)
	for y := range h {
		b.Reset()
		for x := range w {
			// A wide rune's trailing cells have no content.
			if c := s.emu.CellAt(x, y); c != nil {
				b.WriteString(c.Content)
			}
		}
		lines[y] = strings.TrimRight(b.String(), " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Tail is the last n non-empty lines of the screen, oldest first; like
// Screen it may be a little behind the output.
func (s *Seat) Tail(n int) []string {
	if n <= 0 {
		return nil
	}
	var out []string
	lines := s.lines()
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			out = append(out, lines[i])
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// ScreenANSI is the bytes that repaint the screen on a terminal of the
// same size: the alternate screen if the program is on it, the styled
// cells row by row, the DEC private modes the program set (bracketed
// paste, cursor keys, mouse reporting, ...), the cursor position and
// visibility. Scrollback is not included. Like Screen it may be a little
// behind the output; SubscribeScreen is exact.
func (s *Seat) ScreenANSI() string {
	s.lockEmu()
	defer s.emuMu.Unlock()
	return s.screenANSI()
}

// screenANSI needs emuMu.
func (s *Seat) screenANSI() string {
	var b strings.Builder
	if s.emu.IsAltScreen() {
		b.WriteString(ansi.SetModeAltScreenSaveCursor)
	}
	b.WriteString(ansi.ResetStyle + ansi.CursorHomePosition + ansi.EraseEntireScreen)
	for i, line := range strings.Split(s.emu.Render(), "\n") {
		if line == "" {
			continue
		}
		fmt.Fprintf(&b, "\x1b[%d;1H%s%s", i+1, line, ansi.ResetStyle)
	}
	for _, m := range s.shown.repaintModes() {
		b.WriteString(ansi.SetMode(ansi.DECMode(m)))
	}
	pos := s.emu.CursorPosition()
	fmt.Fprintf(&b, "\x1b[%d;%dH", pos.Y+1, pos.X+1)
	if s.emu.CursorHidden() {
		b.WriteString(ansi.ResetModeTextCursorEnable)
	} else {
		b.WriteString(ansi.SetModeTextCursorEnable)
	}
	return b.String()
}
