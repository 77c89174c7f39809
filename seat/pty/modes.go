package pty

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// termState is the pty's size and the terminal modes the output has set
// (true) or reset (false): what a fresh emulator must be told to carry on
// where skipped output left the terminal. A key is a DEC private mode's
// number, or an ANSI mode's number negated. It is never changed once made,
// so queued entries share it.
type termState struct {
	cols, rows int
	modes      map[int]bool
}

// on reports whether DEC private mode m is set.
func (t *termState) on(m ansi.DECMode) bool { return t.modes[int(m)] }

func (t *termState) withSize(cols, rows int) *termState {
	return &termState{cols: cols, rows: rows, modes: t.modes}
}

// with applies ev in order; t itself is left as it was.
func (t *termState) with(ev []modeEvent) *termState {
	n := &termState{cols: t.cols, rows: t.rows, modes: make(map[int]bool, len(t.modes)+len(ev))}
	for k, v := range t.modes {
		n.modes[k] = v
	}
	for _, e := range ev {
		if e.ris {
			clear(n.modes)
			continue
		}
		n.modes[e.mode] = e.on
	}
	return n
}

// repaintModes are the DEC private modes ScreenANSI writes out: those the
// program set, less the ones rendered from the emulator's own state.
func (t *termState) repaintModes() []int {
	var out []int
	for m, on := range t.modes {
		if !on || m < 0 {
			continue
		}
		switch ansi.DECMode(m) {
		case ansi.ModeAltScreen, ansi.ModeAltScreenSaveCursor, ansi.ModeSaveCursor, ansi.ModeTextCursorEnable, 47:
			continue
		}
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// blankANSI is what ScreenANSI gives for an emulator reset into t (see
// restart): the alternate screen if t is on it, nothing drawn, t's modes,
// the cursor at home, hidden if t hides it.
func (t *termState) blankANSI() string {
	var b strings.Builder
	if t.modes[int(ansi.ModeAltScreen)] || t.modes[int(ansi.ModeAltScreenSaveCursor)] {
		b.WriteString(ansi.SetModeAltScreenSaveCursor)
	}
	b.WriteString(ansi.ResetStyle + ansi.CursorHomePosition + ansi.EraseEntireScreen)
	for _, m := range t.repaintModes() {
		b.WriteString(ansi.SetMode(ansi.DECMode(m)))
	}
	b.WriteString("\x1b[1;1H")
	if on, ok := t.modes[int(ansi.ModeTextCursorEnable)]; ok && !on {
		b.WriteString(ansi.ResetModeTextCursorEnable)
	} else {
		b.WriteString(ansi.SetModeTextCursorEnable)
	}
	return b.String()
}

// restore is what a freshly reset emulator is told so it is in t's modes:
// the alternate screen first (switching screens carries the cursor), then
// the rest in order. Saving the cursor (1048) is an action, not a state,
// and is left out.
func (t *termState) restore() []byte {
	keys := make([]int, 0, len(t.modes))
	for m := range t.modes {
		if m != int(ansi.ModeSaveCursor) {
			keys = append(keys, m)
		}
	}
	alt := func(m int) bool {
		return m == 47 || m == int(ansi.ModeAltScreen) || m == int(ansi.ModeAltScreenSaveCursor)
	}
	slices.SortFunc(keys, func(a, b int) int {
		if alt(a) != alt(b) {
			if alt(a) {
				return -1
			}
			return 1
		}
		return a - b
	})
	var b bytes.Buffer
	for _, m := range keys {
		final := 'l'
		if t.modes[m] {
			final = 'h'
		}
		if m < 0 {
			fmt.Fprintf(&b, "\x1b[%d%c", -m, final)
		} else {
			fmt.Fprintf(&b, "\x1b[?%d%c", m, final)
		}
	}
	return b.Bytes()
}

// modeEvent is one mode change in the output, or a full reset (RIS).
type modeEvent struct {
	mode int // as in termState
	on   bool
	ris  bool
}

// maxSeq is the longest escape sequence the scanner follows across a chunk
// boundary; longer ones are not mode changes or queries anyway.
const maxSeq = 64

// modeScanner follows the terminal state a fresh emulator would need after
// output is skipped: mode changes (CSI Pm h / l, with or without ?), full
// resets (ESC c), and the queries the emulator answers (device attributes,
// status and cursor position reports, mode reports), which must still be
// answered when the output that asked is never drawn. It looks only at
// escape sequences, so it costs next to nothing beside the emulator. It
// belongs to the pump.
type modeScanner struct {
	pend []byte // a sequence cut off at the end of the last chunk
}

// scan appends to ev the mode changes in p and to q its queries, in order.
func (m *modeScanner) scan(p []byte, ev []modeEvent, q []byte) ([]modeEvent, []byte) {
	if len(m.pend) > 0 {
		had := len(m.pend)
		buf := append(m.pend, p[:min(len(p), maxSeq)]...)
		n, ok := m.parse(buf, &ev, &q)
		switch {
		case !ok && len(buf) < maxSeq && len(p) < maxSeq:
			m.pend = buf // still cut off: all of p belongs to it
			return ev, q
		case !ok:
			m.pend = m.pend[:0]
		default:
			m.pend = m.pend[:0]
			if n > had {
				p = p[n-had:]
			}
		}
	}
	for {
		i := bytes.IndexByte(p, ansi.ESC)
		if i < 0 {
			return ev, q
		}
		p = p[i:]
		n, ok := m.parse(p, &ev, &q)
		if !ok {
			if len(p) < maxSeq {
				m.pend = append(m.pend[:0], p...)
			}
			return ev, q
		}
		p = p[n:]
	}
}

// parse reads the escape sequence at the start of b (b[0] is ESC) and
// returns how many bytes it spans, 1 when it is none the scanner follows;
// ok is false when b ends inside it.
func (m *modeScanner) parse(b []byte, ev *[]modeEvent, q *[]byte) (n int, ok bool) {
	if len(b) < 2 {
		return 0, false
	}
	switch b[1] {
	case 'c':
		*ev = append(*ev, modeEvent{ris: true})
		return 2, true
	case '[':
	default:
		return 1, true
	}
	i := 2
	var prefix byte
	if i < len(b) && (b[i] == '?' || b[i] == '>' || b[i] == '=') {
		prefix = b[i]
		i++
	}
	start := i
	for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == ';') {
		i++
	}
	params := b[start:i]
	var inter byte
	if i < len(b) && b[i] == '$' {
		inter = b[i]
		i++
	}
	if i >= len(b) {
		return 0, false
	}
	final := b[i]
	if final < 0x40 || final > 0x7e {
		return 1, true
	}
	n = i + 1
	switch {
	case inter == 0 && (final == 'h' || final == 'l') && (prefix == 0 || prefix == '?'):
		for f := range bytes.SplitSeq(params, []byte{';'}) {
			v, err := strconv.Atoi(string(f))
			if err != nil || v <= 0 || v > 1<<16 {
				continue
			}
			if prefix == 0 {
				v = -v
			}
			*ev = append(*ev, modeEvent{mode: v, on: final == 'h'})
		}
	case inter == 0 && final == 'c' && (prefix == 0 || prefix == '>'),
		inter == 0 && final == 'n' && (prefix == 0 || prefix == '?'),
		inter == '$' && final == 'p' && (prefix == 0 || prefix == '?'):
		*q = append(*q, b[:n]...)
	}
	return n, true
}
