package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// An exited seat is removed from the list at once, asking nothing, and
// stays removed across censuses; a running seat is never removed so.
func TestRemoveAnExitedSeatButNeverARunningOne(t *testing.T) {
	h, f := seatHarness(t, Config{})
	crash := seatOn("crash", "m1", "c1")
	crash.Process, crash.State, crash.Exited = "exited 3", "exited", t0.Add(-time.Minute)
	census := Census{Managers: 1, Seats: []Seat{crash, seatOn("shell", "m1", "s1")}}
	h.batch(0, batchMsg{SeatsChanged: true, Census: census})
	if !strings.Contains(h.screen(), "NEEDS YOU · 1") {
		t.Fatalf("the crash is not in the lane:\n%s", h.screen())
	}
	h.keys("<tab>", "d")
	s := h.screen()
	if h.m.mode != modeNormal || seatRow(s, "crash") != "" || !strings.Contains(s, "removed crash (exited 3) from the list") {
		t.Fatalf("d did not remove the exited seat at once:\n%s", s)
	}
	if !strings.Contains(s, "SEATS · 1 · 1 exited removed from view (ps lists them)") || !strings.Contains(s, "NEEDS YOU · 0") {
		t.Errorf("the title does not count the removed seat, or the lane kept it:\n%s", s)
	}
	h.batch(time.Second, batchMsg{SeatsChanged: true, Census: census})
	if seatRow(h.screen(), "crash") != "" {
		t.Error("the removed seat came back with the next census")
	}
	if sel, _ := h.m.seats.selected(); sel.Name != "shell" {
		t.Fatalf("the cursor is on %q, want shell", sel.Name)
	}
	h.keys("d")
	if s := h.screen(); seatRow(s, "shell") == "" || !strings.Contains(s, "seat shell is running: only a seat that has exited is removed") || h.m.mode != modeNormal {
		t.Errorf("d on a running seat:\n%s", s)
	}
	if f.log() != "" {
		t.Errorf("d asked the manager for %q", f.log())
	}
	// A new seat of the removed one's name is another seat, and shown.
	again := seatOn("crash", "m1", "c2")
	h.batch(2*time.Second, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: append(census.Seats, again)}})
	if seatRow(h.screen(), "crash") == "" {
		t.Errorf("a new seat named crash is hidden:\n%s", h.screen())
	}
}

// A feed line too long for the screen opens in full on the feed.
func TestOpenALongFeedPostInFull(t *testing.T) {
	h := newTestModel(t, Config{}, 80, 24)
	long := "the build broke in three places: " + strings.Repeat("parser, lexer and printer all fail; ", 6) + "END OF REPORT"
	h.batch(0, batchMsg{Posts: []Post{
		post("1", "ci", "ci", long, -time.Minute),
		post("2", "general", "bob", "short", -time.Second),
	}})
	if strings.Contains(h.screen(), "END OF REPORT") {
		t.Fatal("the long post fits: the test proves nothing")
	}
	h.keys("<tab>")
	if h.m.panel != panelFeed {
		t.Fatalf("tab did not reach the feed (panel %d)", h.m.panel)
	}
	if !strings.HasPrefix(h.hintBar(), "o/enter read a feed post in full · ") {
		t.Errorf("the feed's own key is not hinted first: %q", h.hintBar())
	}
	h.keys("k")
	if !strings.Contains(h.screen(), "›11:59:00 #ci ci: the build broke") {
		t.Fatalf("k does not mark the long post:\n%s", h.screen())
	}
	h.keys("<enter>")
	s := h.screen()
	if h.m.mode != modePage || !strings.Contains(s, "POST") || !strings.Contains(s, "#ci · from ci (local.ci)") || !strings.Contains(s, "END OF REPORT") {
		t.Fatalf("enter did not open the post in full:\n%s", s)
	}
	for _, l := range strings.Split(s, "\n")[1:] { // under the header
		if strings.Contains(l, "…") {
			t.Errorf("a line of the open post is cut: %q", l)
		}
	}
	h.keys("<esc>")
	h.keys("j", "o")
	if s := h.screen(); !strings.Contains(s, "#general · from bob") || !strings.Contains(s, "short") {
		t.Errorf("o did not open the newest post:\n%s", s)
	}
	h.send(tea.KeyMsg{Type: tea.KeyEscape})
	if h.m.mode != modeNormal {
		t.Error("esc did not close the post")
	}
}
