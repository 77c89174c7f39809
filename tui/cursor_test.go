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

// The roster and SEATS share one selection: moving in one moves the other
// to the same identity (or leaves it with no cursor when the pick is not
// in it); each stays on its row (by identity) when its list re-sorts, and
// a line is only ever typed into the seat the person picked. The roster's
// cursor sat on fake while x offered to stop bash1, SEATS' pick.
func TestOneSelectionForTheRosterAndSeats(t *testing.T) {
	h, f := seatHarness(t, Config{})
	seats := []Seat{seatOn("alice", "m1", "a1"), seatOn("bob", "m1", "b1"), seatOn("shell", "m1", "s1"), seatOn("shell", "m2", "s2")}
	for i := range seats {
		seats[i].PeerID = "local." + seats[i].Name + "@" + seats[i].Manager
	}
	seats[0].PeerID, seats[1].PeerID = "local.alice", "local.bob"
	h.batch(0, batchMsg{
		PeersChanged: true, Peers: []presence.Peer{
			peer("alice", presence.Idle, time.Minute), peer("bob", presence.Idle, time.Minute), peer("carol", presence.Idle, time.Minute),
		},
		SeatsChanged: true, Census: Census{Managers: 2, Seats: seats},
	})

	// The roster's pick moves SEATS' cursor to its seat; both show it.
	h.keys("j")
	if p, _ := h.m.roster.selected(); p.Name != "bob" {
		t.Fatalf("roster cursor on %s, want bob", p.Name)
	}
	if s, ok := h.m.seats.selected(); !ok || s.Name != "bob" {
		t.Errorf("moving in the roster left the SEATS cursor on %s", s.Name)
	}
	if l := seatRow(h.screen(), "bob"); !strings.Contains(l, "›bob") {
		t.Errorf("SEATS does not show the pick: %q", l)
	}
	if s, _ := h.m.focus.load(); s.Name != "bob" || !strings.Contains(h.screen(), "SCREEN · bob") {
		t.Errorf("the preview shows %s, not the pick", s.Name)
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

	// A peer that holds no seat is no seat to type into, and SEATS shows
	// no cursor: nothing there is picked.
	h.keys("G")
	if p, _ := h.m.roster.selected(); p.Name != "carol" {
		t.Fatalf("G put the roster cursor on %s", p.Name)
	}
	if strings.Contains(h.screen(), "›bob ") || strings.Contains(h.screen(), "›alice") {
		t.Errorf("SEATS still shows a cursor with carol picked:\n%s", h.screen())
	}
	if cmd := h.keys("x"); cmd != nil || h.m.mode != modeNormal || !strings.Contains(h.screen(), "carol is no seat of a manager here") {
		t.Errorf("x on carol (no seat) was not refused in words (mode %d):\n%s", h.m.mode, h.screen())
		h.keys("<esc>")
	}

	// SEATS: two seats share the name shell on two managers, neither on
	// the roster; picking one leaves the roster with no cursor, and the
	// pick stays when the census re-sorts around it.
	h.keys("<tab>", "g", "j", "j")
	if s, _ := h.m.seats.selected(); s.key() != "m1/s1" {
		t.Fatalf("SEATS cursor on %s, want shell on m1", s.key())
	}
	if p, ok := h.m.roster.selected(); ok {
		t.Errorf("a seat with no roster row picked, yet the roster has %s", p.Name)
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

	// From SEATS to a seat with a peer: the roster follows; the feed
	// panel acts on the same pick.
	h.keys("g")
	if p, _ := h.m.roster.selected(); p.Name != "bob" {
		t.Errorf("picking bob's seat left the roster on %s", p.Name)
	}
	h.keys("<tab>") // the feed
	h.keys("x")
	if h.m.mode != modeStop || h.m.stopping.Name != "bob" {
		t.Errorf("x from the feed offers to stop %q, want bob, the pick", h.m.stopping.Name)
	}
}

// The / filter narrows the roster, SEATS and the feed alike, and matches
// a status as well as a name (/working). It filtered the roster only,
// by name and role.
func TestFilterNarrowsEveryListAndMatchesStatus(t *testing.T) {
	h, _ := seatHarness(t, Config{})
	busy := seatOn("busy", "m1", "b1")
	busy.Mesh, busy.PeerID = "working", "local.busy"
	calm := seatOn("calm", "m1", "c1")
	calm.PeerID = "local.calm"
	h.batch(0, batchMsg{
		PeersChanged: true, Peers: []presence.Peer{peer("busy", presence.Working, time.Minute), peer("calm", presence.Idle, time.Minute)},
		SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{busy, calm}},
		Posts: []Post{{ID: "1", Kind: "channel", Channel: "team", From: "busy", Text: "on it", At: t0}, {ID: "2", Kind: "channel", Channel: "team", From: "calm", Text: "resting", At: t0}},
	})
	h.keys("/", "working", "<enter>")
	s := h.screen()
	if rosterLine(s, "calm") != "" || rosterLine(s, "busy") == "" {
		t.Errorf("/working in the roster:\n%s", s)
	}
	if seatRow(s, "calm") != "" || seatRow(s, "busy") == "" {
		t.Errorf("/working in SEATS:\n%s", s)
	}
	h.keys("<esc>")
	h.keys("/", "resting", "<enter>")
	s = h.screen()
	if !strings.Contains(s, "calm: resting") || strings.Contains(s, "busy: on it") {
		t.Errorf("/resting in the feed:\n%s", s)
	}
	h.keys("<esc>")
	if s := h.screen(); !strings.Contains(s, "busy: on it") || seatRow(s, "calm") == "" {
		t.Errorf("esc did not clear the filter everywhere:\n%s", s)
	}
}

// n jumps from NEEDS YOU to what it lists: the next entry's seat is
// picked, in SEATS and in the roster.
func TestJumpFromNeedsYouToItsSeat(t *testing.T) {
	h, _ := seatHarness(t, Config{})
	ok := seatOn("aaa", "m1", "a1")
	ok.PeerID = "local.aaa"
	crash := seatOn("zed", "m1", "z1")
	crash.Process, crash.State, crash.Exited = "exited 3", "exited", t0.Add(-time.Minute)
	h.batch(0, batchMsg{
		PeersChanged: true, Peers: []presence.Peer{peer("aaa", presence.Idle, time.Minute), peer("zed", presence.Offline, time.Minute)},
		SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{ok, crash}},
	})
	h.batch(time.Second, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{ok, crash}}}) // zed enters the lane
	if s, _ := h.m.seats.selected(); s.Name != "aaa" {
		t.Fatalf("SEATS starts on %s", s.Name)
	}
	h.keys("n")
	if s, _ := h.m.seats.selected(); s.Name != "zed" || h.m.panel != panelSeats {
		t.Errorf("n picked %s (panel %d), want the crashed zed in SEATS:\n%s", s.Name, h.m.panel, h.screen())
	}
	if !strings.Contains(h.statusLine(), "→ zed: crashed") {
		t.Errorf("the jump is not said: %q", h.statusLine())
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
