package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh/presence"
)

// seatOn is a running seat of a lifecycle on a manager.
func seatOn(name, manager, uid string) Seat {
	s := running(name, "idle", time.Minute)
	s.Manager, s.UID = manager, uid
	return s
}

// The roster and SEATS keep their own cursors; each stays on its row (by
// identity) when its list re-sorts, and a line is only ever typed into the
// seat the person picked.
func TestCursorsKeepTheirRowAndTypingGoesToThePickedSeat(t *testing.T) {
	h, f := seatHarness(t, Config{})
	seats := []Seat{seatOn("alice", "m1", "a1"), seatOn("bob", "m1", "b1"), seatOn("shell", "m1", "s1"), seatOn("shell", "m2", "s2")}
	h.batch(0, batchMsg{
		PeersChanged: true, Peers: []presence.Peer{
			peer("alice", presence.Idle, time.Minute), peer("bob", presence.Idle, time.Minute), peer("carol", presence.Idle, time.Minute),
		},
		SeatsChanged: true, Census: Census{Managers: 2, Seats: seats},
	})

	// The roster's cursor moves alone.
	h.keys("j")
	if p, _ := h.m.roster.selected(); p.Name != "bob" {
		t.Fatalf("roster cursor on %s, want bob", p.Name)
	}
	if s, _ := h.m.seats.selected(); s.Name != "alice" {
		t.Errorf("moving in the roster moved the SEATS cursor to %s", s.Name)
	}
	if s, _ := h.m.focus.load(); s.Name != "bob" || !strings.Contains(h.screen(), "SCREEN · bob") {
		t.Errorf("the preview shows %s, not the roster's pick", s.Name)
	}

	// The roster re-sorts under the cursor: bob starts working and goes
	// first, a newcomer sorts in before him. i types into bob.
	h.batch(time.Second, batchMsg{PeersChanged: true, Peers: []presence.Peer{
		peer("aaron", presence.Idle, 0), peer("alice", presence.Idle, time.Minute),
		peer("bob", presence.Working, 0), peer("carol", presence.Idle, time.Minute),
	}})
	if p, _ := h.m.roster.selected(); p.Name != "bob" || h.m.roster.cursor != 0 {
		t.Fatalf("after the re-sort the roster cursor is on %s (row %d), want bob on row 0", p.Name, h.m.roster.cursor)
	}
	h.keys("i", "hi bob")
	h.run(h.keys("<enter>"))
	if f.log() != "input bob@m1 hi bob" {
		t.Fatalf("typed: %q, want into bob", f.log())
	}

	// A peer that holds no seat is no seat to type into.
	h.keys("G")
	if p, _ := h.m.roster.selected(); p.Name != "carol" {
		t.Fatalf("G put the roster cursor on %s", p.Name)
	}
	if cmd := h.keys("i"); cmd != nil || h.m.mode != modeNormal || !strings.Contains(h.screen(), "carol is no seat of a manager here") {
		t.Errorf("i on carol (no seat) was not refused in words (mode %d):\n%s", h.m.mode, h.screen())
		h.keys("<esc>")
	}

	// SEATS: two seats share the name shell on two managers; the cursor
	// stays on the one picked when the census re-sorts around it.
	h.keys("<tab>", "j", "j")
	if s, _ := h.m.seats.selected(); s.key() != "m1/s1" {
		t.Fatalf("SEATS cursor on %s, want shell on m1", s.key())
	}
	if p, _ := h.m.roster.selected(); p.Name != "carol" {
		t.Errorf("moving in SEATS moved the roster cursor to %s", p.Name)
	}
	h.batch(2*time.Second, batchMsg{SeatsChanged: true, Census: Census{Managers: 2, Seats: append([]Seat{seatOn("abe", "m2", "x1")}, seats...)}})
	h.keys("i", "echo one")
	// A census between opening the line and enter changes nothing either.
	h.batch(3*time.Second, batchMsg{SeatsChanged: true, Census: Census{Managers: 2, Seats: seats[1:]}})
	h.run(h.keys("<enter>"))
	if got := f.log(); got != "input bob@m1 hi bob; input shell@m1 echo one" {
		t.Errorf("typed: %q, want the second line into shell on m1", got)
	}
	if s, _ := h.m.seats.selected(); s.key() != "m1/s1" {
		t.Errorf("after the censuses the SEATS cursor is on %s", s.key())
	}
}

// A spawn finishes seconds after it was asked; its seat must not take the
// keys from the seat the person picked meanwhile, in the roster or in
// SEATS.
func TestASpawnArrivingLateTakesNoPick(t *testing.T) {
	h, f := seatHarness(t, Config{})
	seats := []Seat{seatOn("shell", "m1", "s1"), seatOn("shell_2", "m1", "s2")}
	peers := []presence.Peer{peer("shell", presence.Idle, time.Minute), peer("shell_2", presence.Idle, time.Minute)}
	h.batch(0, batchMsg{PeersChanged: true, Peers: peers, SeatsChanged: true, Census: Census{Managers: 1, Seats: seats}})
	h.run(h.keys("s"))
	h.run(h.keys("<enter>")) // reviewer: its seat will be reviewer_2
	h.keys("j")              // the roster's pick: shell_2
	withNew := append([]Seat{seatOn("reviewer_2", "m1", "r1")}, seats...)
	h.batch(time.Second, batchMsg{
		PeersChanged: true, Peers: append([]presence.Peer{peer("reviewer_2", presence.Idle, 0)}, peers...),
		SeatsChanged: true, Census: Census{Managers: 1, Seats: withNew},
	})
	h.keys("i", "echo picked")
	h.run(h.keys("<enter>"))
	if !strings.HasSuffix(f.log(), "input shell_2@m1 echo picked") {
		t.Errorf("typed: %q, want into shell_2, the roster's pick", f.log())
	}

	// In SEATS: the person moves after asking for a spawn; the new seat
	// arrives and the cursor stays where the person put it.
	h, f = seatHarness(t, Config{})
	f.personas = []string{"late"}
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: seats}})
	h.keys("<tab>")
	h.run(h.keys("s"))
	h.run(h.keys("<enter>")) // its seat will be late_2
	h.keys("j")
	h.batch(time.Second, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: append(seats, seatOn("late_2", "m1", "l1"))}})
	h.keys("i", "echo moved")
	h.run(h.keys("<enter>"))
	if !strings.HasSuffix(f.log(), "input shell_2@m1 echo moved") {
		t.Errorf("typed: %q, want into shell_2, where the person moved", f.log())
	}
}
