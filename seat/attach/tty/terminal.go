package tty

import (
	"io"
	"sync"

	"github.com/charmbracelet/x/term"
)

// resetModes undoes what a seat's program may have switched on in the
// person's terminal: the alternate screen, a hidden or restyled cursor,
// bracketed paste, mouse and focus reporting, application cursor keys and
// keypad, the kitty keyboard protocol, a scroll region (the cursor kept
// where it is), autowrap and colours.
const resetModes = "\x1b[?1049l" + // leave the alternate screen
	"\x1b[?25h\x1b[0 q" + // cursor shown, default shape
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

// write puts bytes on the screen, until restore.
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
		_, _ = io.WriteString(t.out, resetModes)
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
