package tty_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	cpty "github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/seat/attach/tty"
)

// resetShown is part of what a restored terminal was sent; firstScreen
// starts every repaint.
const (
	resetShown  = "\x1b[?25h\x1b[0 q\x1b[?2004l"
	firstScreen = "\x1b[H\x1b[2J"
)

// TestKeysPassThroughAndDetachRestores: in raw mode every key reaches the
// seat as typed (Ctrl-C, Escape, arrows, function keys, the person's own
// bracketed paste), the window's size is the seat's, and the detach key
// ends the attach with the terminal as it was.
func TestKeysPassThroughAndDetachRestores(t *testing.T) {
	p := newPerson(t, 90, 25)
	s := newServer(t)
	before := p.termios()
	res := attachRun(t, context.Background(), p, tty.Options{}, s.open)

	p.waitShown("[cotal: attached to shell; Ctrl-] detaches]", 1)
	p.waitShown(firstScreen, 1)
	if tio := p.termios(); tio.Lflag&(unix.ICANON|unix.ECHO|unix.ISIG) != 0 {
		t.Fatalf("the terminal is not raw while attached: lflag %#o", tio.Lflag)
	}
	if cols, rows := s.seat.Size(); cols != 90 || rows != 25 {
		t.Fatalf("the seat is %dx%d, want the window's 90x25", cols, rows)
	}
	// Ctrl-C interrupts the seat's sleep: without it the echo waits 30 s.
	p.typeKeys("sleep 30\r")
	s.waitScreen("sleep 30")
	p.typeKeys("\x03")
	// The interrupt flushes what was typed ahead of it: type the echo at
	// the prompt the shell prints after it.
	s.waitScreen("sleep 30\n^C\n$")
	p.typeKeys("echo keys-$((6*7))\r")
	p.waitShown("keys-42", 1)

	// cat -v prints what it read: the seat's echo and cat's line both show
	// the bytes exactly as typed.
	p.typeKeys("cat -v\r")
	s.waitScreen("cat -v")
	p.typeKeys("\x1b[A\x1bOP\x1b[15~\x1b\x01\x1b[200~pasted\x1b[201~\r")
	s.waitScreen("^[[A^[OP^[[15~^[^A^[[200~pasted^[[201~\n^[[A^[OP^[[15~^[^A^[[200~pasted^[[201~")
	p.typeKeys("\x04")

	p.typeKeys("\x1d")
	r := waitResult(t, res)
	if r.end != tty.Detached || r.err != nil {
		t.Fatalf("Run ended %v (%v), want Detached", r.end, r.err)
	}
	if after := p.termios(); after != before {
		t.Fatalf("the terminal was not restored:\nbefore %+v\nafter  %+v", before, after)
	}
	p.waitShown(resetShown, 1)
	if strings.Contains(p.shown(), "\x1b[?1049l") {
		t.Error("the alternate screen was left though the seat never used it (tmux moves the cursor then)")
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		if n := s.sessions(); n != 0 {
			return errorf("%d sessions still live after the detach", n)
		}
		return nil
	})
}

// TestResizeFollowsTheWindow: SIGWINCH sends the window's new size.
func TestResizeFollowsTheWindow(t *testing.T) {
	p := newPerson(t, 80, 24)
	s := newServer(t)
	res := attachRun(t, context.Background(), p, tty.Options{}, s.open)
	p.waitShown(firstScreen, 1)
	if err := cpty.Setsize(p.ptmx, &cpty.Winsize{Cols: 101, Rows: 33}); err != nil {
		t.Fatal(err)
	}
	// The window is not this process's controlling terminal, so the
	// kernel signals nobody here: do what it does for the foreground.
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		if cols, rows := s.seat.Size(); cols != 101 || rows != 33 {
			return errorf("the seat is %dx%d, want 101x33", cols, rows)
		}
		return nil
	})
	p.typeKeys("stty size\r")
	p.waitShown("33 101", 1)
	p.typeKeys("\x1d")
	if r := waitResult(t, res); r.end != tty.Detached {
		t.Fatalf("Run ended %v (%v)", r.end, r.err)
	}
}

// TestReconnectsWithAFreshGrant: a session ended by a manager restart, and
// one whose connection was lost, come back on a fresh grant with a
// repaint; typing works again.
func TestReconnectsWithAFreshGrant(t *testing.T) {
	p := newPerson(t, 80, 24)
	s := newServer(t)
	res := attachRun(t, context.Background(), p, tty.Options{}, s.open)
	p.typeKeys("echo first-$((1+1))\r")
	p.waitShown("first-2", 1)

	s.restart()
	p.waitShown("[cotal: manager restarted; re-attaching]", 1)
	p.waitShown("[cotal: reconnected]", 1)
	p.waitShown("first-2", 2) // the repaint
	p.typeKeys("echo second-$((2+2))\r")
	p.waitShown("second-4", 1)

	s.dropConn()
	p.waitShown("[cotal: connection lost, reconnecting]", 1)
	p.waitShown("[cotal: reconnected]", 2)
	p.typeKeys("echo third-$((3+3))\r")
	p.waitShown("third-6", 1)
	if n := s.openCount(); n != 3 {
		t.Errorf("%d grants asked for, want 3 (one per session)", n)
	}
	p.typeKeys("\x1d")
	if r := waitResult(t, res); r.end != tty.Detached {
		t.Fatalf("Run ended %v (%v)", r.end, r.err)
	}
}

// TestEndings: the seat exiting, the seat gone on reconnect, a refusal,
// no reconnect, a detach while reconnecting, ctx ending.
func TestEndings(t *testing.T) {
	t.Run("seat exits", func(t *testing.T) {
		p := newPerson(t, 80, 24)
		s := newServer(t)
		res := attachRun(t, context.Background(), p, tty.Options{}, s.open)
		p.waitShown(firstScreen, 1)
		p.typeKeys("exit\r")
		if r := waitResult(t, res); r.end != tty.Exited || r.err != nil {
			t.Fatalf("Run ended %v (%v), want Exited", r.end, r.err)
		}
	})
	t.Run("gone on reconnect", func(t *testing.T) {
		p := newPerson(t, 80, 24)
		s := newServer(t)
		res := attachRun(t, context.Background(), p, tty.Options{}, s.open)
		p.waitShown(firstScreen, 1)
		s.failWith(errorWrap(tty.ErrGone))
		s.restart()
		if r := waitResult(t, res); r.end != tty.Gone || r.err != nil {
			t.Fatalf("Run ended %v (%v), want Gone", r.end, r.err)
		}
	})
	t.Run("refused on reconnect", func(t *testing.T) {
		p := newPerson(t, 80, 24)
		s := newServer(t)
		res := attachRun(t, context.Background(), p, tty.Options{}, s.open)
		p.waitShown(firstScreen, 1)
		s.failWith(denied)
		s.restart()
		if r := waitResult(t, res); r.end != tty.Failed || r.err == nil {
			t.Fatalf("Run ended %v (%v), want Failed with the refusal", r.end, r.err)
		}
	})
	t.Run("no reconnect", func(t *testing.T) {
		p := newPerson(t, 80, 24)
		s := newServer(t)
		res := attachRun(t, context.Background(), p, tty.Options{NoReconnect: true}, s.open)
		p.waitShown(firstScreen, 1)
		s.restart()
		if r := waitResult(t, res); r.end != tty.Restarted {
			t.Fatalf("Run ended %v (%v), want Restarted", r.end, r.err)
		}
		if s.openCount() != 1 {
			t.Fatalf("asked for %d grants, want 1", s.openCount())
		}
	})
	t.Run("detach while reconnecting", func(t *testing.T) {
		p := newPerson(t, 80, 24)
		s := newServer(t)
		before := p.termios()
		res := attachRun(t, context.Background(), p, tty.Options{}, s.open)
		p.waitShown(firstScreen, 1)
		s.failWith(errDown)
		s.restart()
		testutil.WaitFor(t, 10*time.Second, func() error {
			if s.openCount() < 3 {
				return errorf("%d tries so far", s.openCount())
			}
			return nil
		})
		p.typeKeys("typed while down\x1d")
		if r := waitResult(t, res); r.end != tty.Detached {
			t.Fatalf("Run ended %v (%v), want Detached", r.end, r.err)
		}
		if p.termios() != before {
			t.Fatal("the terminal was not restored")
		}
	})
	t.Run("ctx ends", func(t *testing.T) {
		p := newPerson(t, 80, 24)
		s := newServer(t)
		before := p.termios()
		ctx, cancel := context.WithCancel(context.Background())
		res := attachRun(t, ctx, p, tty.Options{}, s.open)
		p.waitShown(firstScreen, 1)
		cancel()
		if r := waitResult(t, res); r.end != tty.Cancelled {
			t.Fatalf("Run ended %v (%v), want Cancelled", r.end, r.err)
		}
		if p.termios() != before {
			t.Fatal("the terminal was not restored")
		}
	})
}

// TestReadOnlySendsNoKeys: a watcher's keys never reach the seat, nor
// its window's size; the detach key still works, and the note says so.
func TestReadOnlySendsNoKeys(t *testing.T) {
	p := newPerson(t, 70, 20)
	s := newServer(t)
	res := attachRun(t, context.Background(), p, tty.Options{ReadOnly: true}, s.open)
	p.waitShown("[cotal: watching shell read-only: your keys are not sent; Ctrl-] detaches]", 1)
	p.waitShown(firstScreen, 1)
	p.typeKeys("echo typed-$((4*4))\r")
	// What the seat prints after the keys were typed is seen; the keys
	// would have been written before it.
	if _, err := s.seat.Write([]byte("echo marker-$((5*5))\r")); err != nil {
		t.Fatal(err)
	}
	p.waitShown("marker-25", 1)
	if strings.Contains(s.seat.Screen(), "typed-") {
		t.Fatalf("a read-only watcher's keys reached the seat:\n%s", s.seat.Screen())
	}
	if cols, rows := s.seat.Size(); cols != 80 || rows != 24 {
		t.Fatalf("a read-only watcher resized the seat to %dx%d", cols, rows)
	}
	p.typeKeys("\x1d")
	if r := waitResult(t, res); r.end != tty.Detached {
		t.Fatalf("Run ended %v (%v)", r.end, r.err)
	}
}

// TestAnotherDetachKey: with ctrl-q as the detach key, Ctrl-] is a key
// like any other.
func TestAnotherDetachKey(t *testing.T) {
	key, err := tty.ParseDetachKey("ctrl-q")
	if err != nil {
		t.Fatal(err)
	}
	p := newPerson(t, 80, 24)
	s := newServer(t)
	res := attachRun(t, context.Background(), p, tty.Options{DetachKey: key}, s.open)
	p.waitShown("[cotal: attached to shell; Ctrl-Q detaches]", 1)
	p.waitShown(firstScreen, 1)
	p.typeKeys("cat -v\r")
	s.waitScreen("cat -v")
	p.typeKeys("\x1d\r")
	s.waitScreen("^]\n^]")
	p.typeKeys("\x04\x11")
	if r := waitResult(t, res); r.end != tty.Detached {
		t.Fatalf("Run ended %v (%v)", r.end, r.err)
	}
}

// TestPanicRestoresTheTerminal: a panic inside the attach leaves the
// terminal as it was before it takes the process down.
func TestPanicRestoresTheTerminal(t *testing.T) {
	p := newPerson(t, 80, 24)
	before := p.termios()
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		_, _ = tty.Run(context.Background(), tty.Options{Name: "shell", In: p.tty, Out: p.tty}, func(context.Context) (*natsConn, rawGrant, error) {
			if tio := p.termios(); tio.Lflag&unix.ICANON != 0 {
				t.Error("not raw before the panic")
			}
			panic("boom")
		})
	}()
	if recovered != "boom" {
		t.Fatalf("recovered %v, want the panic to go on", recovered)
	}
	if p.termios() != before {
		t.Fatal("the terminal was not restored after a panic")
	}
	p.waitShown(resetShown, 1)
}

// TestDetachLeavesTheAlternateScreen: a seat's program left on the
// alternate screen (a full-screen editor) is left there on detach, the
// switch seen even when it arrives cut in two.
func TestDetachLeavesTheAlternateScreen(t *testing.T) {
	p := newPerson(t, 80, 24)
	s := newServer(t)
	res := attachRun(t, context.Background(), p, tty.Options{}, s.open)
	p.waitShown(firstScreen, 1)
	p.typeKeys("printf '\\033[?10'; sleep 0.2; printf '49hin-alt\\n'\r")
	p.waitShown("in-alt", 2)
	p.typeKeys("\x1d")
	if r := waitResult(t, res); r.end != tty.Detached {
		t.Fatalf("Run ended %v (%v)", r.end, r.err)
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		shown := p.shown()
		if i, j := strings.LastIndex(shown, "in-alt"), strings.LastIndex(shown, "\x1b[?1049l"); j < i {
			return errorf("the alternate screen was not left after the seat entered it")
		}
		return nil
	})
}
