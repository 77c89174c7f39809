package pty

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
)

func spareNow() *vt.Emulator {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	return spare.emu
}

// A seat's start builds no emulator: it takes the one built ahead, and
// the next is built after the seat has drawn its first output.
func TestStartTakesTheEmulatorBuiltAhead(t *testing.T) {
	keeping(t, true)
	SpareReady()
	ahead := spareNow()
	if ahead == nil {
		t.Fatal("no emulator built ahead after SpareReady")
	}
	s := startSeat(t, "sh", "-c", "read x; echo got-$x; sleep 5")
	<-s.emuReady
	if s.emu != ahead {
		t.Fatal("the seat built an emulator of its own instead of taking the one built ahead")
	}
	if _, err := s.Paste("one", true); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, s, "got-one")
	waitFor(t, 5*time.Second, func() error {
		if e := spareNow(); e == nil || e == ahead {
			return errors.New("no new spare after the seat's first output")
		}
		return nil
	})
}

// A process that starts one seat in its life (a keeper) builds no
// emulator ahead after it: the 5 MB would never be used.
func TestNoSpareUnlessKept(t *testing.T) {
	keeping(t, false)
	spare.mu.Lock()
	spare.emu = nil
	spare.mu.Unlock()
	s := startSeat(t, "sh", "-c", "echo drawn; sleep 5")
	waitScreen(t, s, "drawn")
	<-s.spared
	spare.mu.Lock()
	building, e := spare.building, spare.emu
	spare.mu.Unlock()
	if building || e != nil {
		t.Fatal("a process not keeping spares built one after a seat's start")
	}
}

// keeping sets KeepSpare's flag for one test.
func keeping(t *testing.T, on bool) {
	was := keepSpare.Load()
	keepSpare.Store(on)
	t.Cleanup(func() { keepSpare.Store(was) })
}

// A seat of another size than the spare's gets it resized, and draws
// at its own size.
func TestTheSpareTakesTheSeatsSize(t *testing.T) {
	SpareReady()
	s := startConfig(t, Config{Path: "sh", Args: []string{"-c", "stty size; sleep 5"}, Cols: 50, Rows: 10})
	waitScreen(t, s, "10 50")
	s.lockEmu()
	w, h := s.emu.Width(), s.emu.Height()
	s.emuMu.Unlock()
	if w != 50 || h != 10 {
		t.Fatalf("emulator %dx%d; want 50x10", w, h)
	}
}

// With no spare, a seat builds its emulator beside the program's start,
// and what reads the screen meanwhile waits for it rather than fail.
func TestScreenWaitsForTheEmulator(t *testing.T) {
	SpareReady()
	spare.mu.Lock()
	spare.emu = nil // as if another seat had just taken it
	spare.mu.Unlock()
	s := startSeat(t, "sh", "-c", "echo drawn; sleep 5")
	if scr := s.Screen(); strings.Contains(scr, "\x00") {
		t.Fatalf("screen %q", scr)
	}
	waitScreen(t, s, "drawn")
	if got := fmt.Sprint(s.Tail(1)); got != "[drawn]" {
		t.Fatalf("Tail %s; want [drawn]", got)
	}
}
