package tty

import (
	"bytes"
	"io"
	"sync"

	"github.com/charmbracelet/x/term"
)

// leaveAlt leaves the alternate screen. Sent only when the seat is on it:
// some terminals (tmux) also move the cursor back to where it was saved
// when it is not.
const leaveAlt = "\x1b[?1049l"

// resetModes undoes what a seat's program may have switched on in the
// person's terminal but the alternate screen: a hidden or restyled cursor,
// bracketed paste, mouse and focus reporting, application cursor keys and
// keypad, the kitty keyboard protocol, a scroll region (the cursor kept
// where it is), autowrap and colours.
const resetModes = "\x1b[?25h\x1b[0 q" + // cursor shown, default shape
	"\x1b[?2004l" + // bracketed paste
	"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l" + // mouse reports
	"\x1b[?1004l" + // focus reports
	"\x1b[?1l\x1b>" + // normal cursor keys and keypad
	"\x1b[<u" + // kitty keyboard flags popped
	"\x1b7\x1b[r\x1b8" + // whole screen scrolls, cursor kept
	"\x1b[?7h\x1b[0m" // autowrap, plain colours

// fdFile is what a terminal's reader or writer has when it is a file.
type fdFile interface{ Fd() uintptr }

// terminal is the person's side: raw mode while attached, writes
// serialized, and restore run exactly once however Run ends. mu guards
// the writes and restored.
type terminal struct {
	in  io.Reader
	out io.Writer

	inFd, outFd   uintptr
	inTTY, outTTY bool
	saved         *term.State // the keyboard's mode before raw

	mu       sync.Mutex
	restored bool
	alt      bool   // the seat's output has the terminal on its alternate screen
	tail     []byte // the end of the last output, for a switch cut in two
}

// The switches of the alternate screen a program sends (1049, 1047, 47).
var (
	altOn  = [][]byte{[]byte("\x1b[?1049h"), []byte("\x1b[?1047h"), []byte("\x1b[?47h")}
	altOff = [][]byte{[]byte("\x1b[?1049l"), []byte("\x1b[?1047l"), []byte("\x1b[?47l")}
)

const altTail = 8 // longer than any switch

// lastSwitch finds the last switch of the alternate screen in p: its
// position (-1 for none) and whether it is on.
func lastSwitch(p []byte) (int, bool) {
	at, on := -1, false
	for i := range altOn {
		if j := bytes.LastIndex(p, altOn[i]); j > at {
			at, on = j, true
		}
		if j := bytes.LastIndex(p, altOff[i]); j > at {
			at, on = j, false
		}
	}
	return at, on
}

// track follows the alternate screen through output; it needs mu.
func (t *terminal) track(p []byte) {
	seam := append(t.tail, p[:min(len(p), altTail)]...)
	if at, on := lastSwitch(seam); at >= 0 {
		t.alt = on
	}
	if at, on := lastSwitch(p); at >= 0 {
		t.alt = on
	}
	t.tail = append(t.tail[:0], p[max(len(p)-altTail, 0):]...)
}

// output puts the seat's bytes on the screen, until restore.
func (t *terminal) output(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.restored {
		t.track(p)
		_, _ = t.out.Write(p)
	}
}

// resetLocked writes the resets; it needs mu.
func (t *terminal) resetLocked() {
	if t.alt {
		_, _ = io.WriteString(t.out, leaveAlt)
		t.alt = false
	}
	_, _ = io.WriteString(t.out, resetModes)
}

// reset resets the modes the seat's program set, as restore does, but
// stays attached: a fresh screen follows.
func (t *terminal) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.restored && (t.outTTY || t.inTTY) {
		t.resetLocked()
	}
}

// openTerminal switches the keyboard, when it is a terminal, to raw mode.
func openTerminal(in io.Reader, out io.Writer) (*terminal, error) {
	t := &terminal{in: in, out: out}
	if f, ok := in.(fdFile); ok {
		t.inFd, t.inTTY = f.Fd(), term.IsTerminal(f.Fd())
	}
	if f, ok := out.(fdFile); ok {
		t.outFd, t.outTTY = f.Fd(), term.IsTerminal(f.Fd())
	}
	if t.inTTY {
		st, err := term.MakeRaw(t.inFd)
		if err != nil {
			return nil, err
		}
		t.saved = st
	}
	return t, nil
}

// size is the person's window, if a terminal says.
func (t *terminal) size() (cols, rows int, ok bool) {
	fd, tty := t.outFd, t.outTTY
	if !tty {
		fd, tty = t.inFd, t.inTTY
	}
	if !tty {
		return 0, 0, false
	}
	cols, rows, err := term.GetSize(fd)
	if err != nil || cols < 1 || rows < 1 {
		return 0, 0, false
	}
	return cols, rows, true
}

// write puts cotal's own bytes on the screen, until restore.
func (t *terminal) write(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.restored {
		_, _ = t.out.Write(p) // a screen that is gone (SIGHUP) is not an error of the session
	}
}

// note writes one line of cotal's own, on a line of its own.
func (t *terminal) note(s string) { t.write([]byte("\r\n" + s + "\r\n")) }

// restore leaves raw mode and resets the modes the seat's program set;
// later writes are dropped. It runs once.
func (t *terminal) restore() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.restored {
		return
	}
	t.restored = true
	if t.outTTY || t.inTTY {
		t.resetLocked()
	}
	if t.saved != nil {
		_ = term.Restore(t.inFd, t.saved)
	}
}

// guard, deferred in every goroutine that touches the terminal, restores
// it before a panic takes the process down.
func (t *terminal) guard() {
	if r := recover(); r != nil {
		t.restore()
		panic(r)
	}
}
