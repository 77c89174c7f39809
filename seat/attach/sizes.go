package attach

import (
	"fmt"
	"sync"
	"time"
)

// Several terminals attached to one seat may differ in size; the seat has
// one. The rule is tmux's: the seat takes the smallest attached size (in
// each dimension), so every terminal shows all of it, and a larger
// terminal draws the rest blank. Each terminal is told: its title names
// the seat's size and how many are attached, and a terminal taller than
// the seat says so on the first blank line under it. When one detaches,
// the seat grows to the smallest of the rest.

// size is a terminal's columns and rows.
type size struct{ cols, rows int }

func (z size) known() bool { return z.cols > 0 && z.rows > 0 }

// sizeView is what one session is told: the seat's size, its own, and how
// many sessions share the seat.
type sizeView struct {
	seat, own size
	attached  int
}

// sizes keeps each live session's size per seat terminal and sets the
// terminal to the smallest. Safe for concurrent use.
type sizes struct {
	mu sync.Mutex
	by map[Terminal]map[*Server]size
}

// set records a session's size and applies the rule to its seat.
func (z *sizes) set(term Terminal, s *Server, cols, rows int) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.by == nil {
		z.by = map[Terminal]map[*Server]size{}
	}
	if z.by[term] == nil {
		z.by[term] = map[*Server]size{}
	}
	z.by[term][s] = size{cols, rows}
	z.applyLocked(term)
}

// drop forgets an ended session; the rest of its seat's sessions decide.
func (z *sizes) drop(term Terminal, s *Server) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if _, ok := z.by[term][s]; !ok {
		return
	}
	delete(z.by[term], s)
	if len(z.by[term]) == 0 {
		delete(z.by, term)
		return
	}
	z.applyLocked(term)
}

// applyLocked sets the terminal to the smallest size its sessions gave
// and tells each session.
func (z *sizes) applyLocked(term Terminal) {
	var least size
	for _, sz := range z.by[term] {
		if !sz.known() {
			continue
		}
		if !least.known() {
			least = sz
			continue
		}
		least.cols, least.rows = min(least.cols, sz.cols), min(least.rows, sz.rows)
	}
	if !least.known() {
		return
	}
	_ = term.Resize(least.cols, least.rows) // out of the seat's range: ignored, as a terminal would
	for s, own := range z.by[term] {
		s.setSizeView(sizeView{seat: least, own: own, attached: len(z.by[term])})
	}
}

// setSizeView keeps what the session is told of sizes and, when it
// changed, owes the holder a repaint that carries it.
func (s *Server) setSizeView(v sizeView) {
	s.sizeMu.Lock()
	old := s.sizeView
	s.sizeView = v
	s.sizeMu.Unlock()
	if old == v || (old.attached <= 1 && v.attached <= 1 && v.own == v.seat) {
		return
	}
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// sizeNotice is what follows a repaint to say the rule: the terminal's
// title, and on a terminal taller than the seat a line under it. Nothing
// while the session is alone and its size is the seat's.
func (s *Server) sizeNotice() []byte {
	s.sizeMu.Lock()
	v := s.sizeView
	told := s.sizeTold
	s.sizeTold = v.attached > 1
	s.sizeMu.Unlock()
	if !v.seat.known() {
		return nil
	}
	if v.attached <= 1 && v.own == v.seat {
		if told { // the others left: the title says so no more
			return []byte("\x1b]2;cotal: " + s.target + "\x07")
		}
		return nil
	}
	what := fmt.Sprintf("cotal: %s is %dx%d, the smallest of %d attached terminals", s.target, v.seat.cols, v.seat.rows, v.attached)
	if v.attached <= 1 {
		what = fmt.Sprintf("cotal: %s is %dx%d (its own range)", s.target, v.seat.cols, v.seat.rows)
	}
	out := []byte("\x1b]2;" + what + "\x07")
	if v.own.rows > v.seat.rows && v.own.cols > 0 {
		line := "[" + what + "; the rest of this one stays blank]"
		if len(line) > v.own.cols {
			line = line[:v.own.cols]
		}
		// Save the cursor, write on the first row under the seat's screen,
		// restore: the seat's program never draws there.
		out = append(out, fmt.Sprintf("\x1b7\x1b[%d;1H\x1b[2K%s\x1b8", v.seat.rows+1, line)...)
	}
	return out
}

// redrawEvery bounds how often a larger holder's screen is redrawn while
// the seat writes.
const redrawEvery = 50 * time.Millisecond

// redraws handles a chunk of output for a holder larger than the seat: the
// seat's bytes would wrap and scroll at the holder's edges, not the
// seat's, so the holder gets the seat's screen, drawn line by line at its
// place, at most every redrawEvery (tmux draws a larger client from its
// own picture of the pane the same way). It reports whether it took the
// chunk.
func (s *Server) redraws(o *output) bool {
	s.sizeMu.Lock()
	v := s.sizeView
	s.sizeMu.Unlock()
	if !v.seat.known() || (v.own.cols <= v.seat.cols && v.own.rows <= v.seat.rows) {
		return false
	}
	o.repaint = true
	if wait := redrawEvery - time.Since(o.painted); wait > 0 {
		if o.redraw == nil {
			o.redraw = time.After(wait)
		}
		return true
	}
	s.flush(o)
	return true
}
