package pty

import (
	"bytes"
	"fmt"
	"slices"
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
