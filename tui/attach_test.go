package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/seat/attach/tty"
)

// TestAttachKeysHandTheSelectedSeatOver: a and Enter attach to the
// selected seat (Enter not from the feed), an exited seat is refused in
// words, and how the attach ended is said in the status bar.
func TestAttachKeysHandTheSelectedSeatOver(t *testing.T) {
	h, f := seatHarness(t, Config{})
	gone := running("gone", "offline", 0)
	gone.Process = "exited 1"
	shell := running("shell", "idle", time.Minute)
	shell.UID = "uid1"
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{gone, shell}}})

	if cmd := h.keys("a"); cmd != nil || !strings.Contains(h.screen(), "seat gone is not running (exited 1); there is no terminal to attach to") {
		t.Fatalf("a on an exited seat was not refused in words:\n%s", h.screen())
	}
	h.keys("<tab>", "j")
	for _, k := range []string{"a", "<enter>"} {
		h.m.attaching = nil
		if cmd := h.keys(k); cmd == nil || h.m.attaching == nil || h.m.attaching.seat.Name != "shell" {
			t.Fatalf("%s on the selected seat did not attach to it", k)
		}
	}
	// The attach itself, on a reader that is no terminal: the manager is
	// asked for the seat's lifecycle, and its refusal is shown.
	a := h.m.attaching
	a.SetStdin(strings.NewReader(""))
	a.SetStdout(&strings.Builder{})
	if err := a.Run(); err != nil {
		t.Fatal(err)
	}
	if f.log() != "attach shell@m1 uid uid1" {
		t.Errorf("calls %q, want one attach to shell's lifecycle", f.log())
	}
	h.send(attachedMsg{seat: a.seat, end: a.end, err: a.err})
	if s := h.screen(); !strings.Contains(s, "attach to shell: no terminal in this test") || h.m.attaching != nil {
		t.Fatalf("the failed attach is not said:\n%s", s)
	}
	h.send(attachedMsg{seat: a.seat})
	if s := h.screen(); !strings.Contains(s, "detached from shell; it runs on") {
		t.Fatalf("the detach is not said:\n%s", s)
	}

	// Enter in the feed is the feed's.
	h.keys("<tab>")
	h.m.attaching = nil
	if h.keys("<enter>"); h.m.attaching != nil {
		t.Fatal("Enter in the feed attached")
	}
}

// TestCtrlCInAPromptClearsIt: Ctrl-C in the seat line (and the send
// line) abandons it; it never asks to quit.
func TestCtrlCInAPromptClearsIt(t *testing.T) {
	h, f := seatHarness(t, Config{ConfirmQuit: func() []string { return []string{"shell"} }})
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{running("shell", "idle", time.Minute)}}})
	for _, open := range []string{"i", "c"} {
		h.keys(open)
		h.keys("half a line")
		if cmd := h.send(tea.KeyMsg{Type: tea.KeyCtrlC}); cmd != nil {
			t.Fatalf("Ctrl-C in the %s prompt returned a command (a quit check?)", open)
		}
		s := h.screen()
		if h.m.mode != modeNormal || h.m.quitting || strings.Contains(s, "stop it and quit?") || strings.Contains(s, "half a line") {
			t.Fatalf("Ctrl-C in the %s prompt did not just clear it (mode %d):\n%s", open, h.m.mode, s)
		}
	}
	if f.log() != "" {
		t.Errorf("something was sent: %s", f.log())
	}
	// Outside a prompt Ctrl-C still asks.
	if cmd := h.send(tea.KeyMsg{Type: tea.KeyCtrlC}); cmd == nil {
		t.Fatal("Ctrl-C on the dashboard no longer asks to quit")
	}
}

// TestSeatRowNamesWhoIsAttached: the seat list shows the holders.
func TestSeatRowNamesWhoIsAttached(t *testing.T) {
	h, _ := seatHarness(t, Config{})
	shell := running("shell", "idle", time.Minute)
	shell.Attached = []string{"local.root", "local.root"}
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{shell, running("other", "idle", time.Minute)}}})
	s := h.screen()
	if l := seatRow(s, "shell"); !strings.Contains(l, "⧉ root×2") {
		t.Errorf("shell's row %q does not name who is attached", l)
	}
	if l := seatRow(s, "other"); strings.Contains(l, "⧉") {
		t.Errorf("other's row %q shows an attach", l)
	}
}

// TestTheDetachNoteOutlivesALongAttach: the program takes no batch while
// the seat has the terminal, so a note timed by the clock it last knew
// was as old as the attach and never shown after one longer than a note
// stays up; a batch built before the attach and handed over after it
// does not set the clock back either.
func TestTheDetachNoteOutlivesALongAttach(t *testing.T) {
	h, _ := seatHarness(t, Config{})
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{running("shell", "idle", time.Minute)}}})
	long := 4 * noteFor
	h.send(attachedMsg{seat: running("shell", "idle", time.Minute), end: tty.Detached, took: long})
	h.batch(time.Second, batchMsg{}) // built as the attach began
	h.batch(long+time.Second, batchMsg{})
	if s := h.screen(); !strings.Contains(s, "detached from shell; it runs on") {
		t.Fatalf("the detach after a %s attach is not said:\n%s", long, s)
	}
}
