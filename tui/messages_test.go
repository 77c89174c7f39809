package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/mesh/presence"
)

// hintBar is the line above the status bar.
func (h *harness) hintBar() string {
	lines := strings.Split(h.screen(), "\n")
	return lines[len(lines)-2]
}

func (h *harness) statusLine() string {
	lines := strings.Split(h.screen(), "\n")
	return lines[len(lines)-1]
}

// A receipt or an error shows for a few seconds and then leaves the
// screen for the message log: the key hints come back, and an error not
// yet read is counted until the log is opened.
func TestReceiptsExpireIntoTheLogAndTheHintsComeBack(t *testing.T) {
	h, f := seatHarness(t, Config{})
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{running("shell", "idle", time.Minute)}}})
	if !strings.Contains(h.hintBar(), "? all keys") {
		t.Fatalf("no key hints at first: %q", h.hintBar())
	}
	h.send(h.keys("c", "#general hello there", "<enter>")())
	if !strings.Contains(h.hintBar(), "→ #general: stored seq 1") {
		t.Fatalf("no receipt: %q", h.hintBar())
	}
	h.keys("i", "ls")
	h.run(h.keys("<enter>"))
	if !strings.Contains(h.statusLine(), "→ sent 3 bytes to shell") {
		t.Fatalf("no seat receipt: %q", h.statusLine())
	}
	h.batch(6*time.Second, batchMsg{})
	if strings.Contains(h.screen(), "stored seq 1") || strings.Contains(h.screen(), "sent 3 bytes") || !strings.Contains(h.hintBar(), "? all keys") {
		t.Errorf("receipts still shown after 6s, or no hints:\n%s", h.screen())
	}

	f.err = errors.New("seat shell exited; nothing was written, and this error is long enough that a narrow status bar cuts it off before its end")
	h.keys("i", "ls")
	h.run(h.keys("<enter>"))
	if !strings.Contains(h.statusLine(), "! 0s ago: input to shell: seat shell exited") {
		t.Fatalf("no error: %q", h.statusLine())
	}
	h.batch(10*time.Second, batchMsg{})
	if !strings.Contains(h.statusLine(), "input to shell") {
		t.Errorf("the error left after 4s: %q", h.statusLine())
	}
	h.batch(17*time.Second, batchMsg{})
	if s := h.statusLine(); strings.Contains(s, "input to shell") || !strings.Contains(s, "! 1 error · m shows them") {
		t.Errorf("after 11s the status bar says %q, want the error counted", s)
	}

	h.keys("m")
	s := h.screen()
	for _, want := range []string{"MESSAGE LOG", "→ #general: stored seq 1", "→ sent 3 bytes to shell", "! input to shell: seat shell exited", "before its end"} {
		if !strings.Contains(s, want) {
			t.Errorf("the log lacks %q:\n%s", want, s)
		}
	}
	h.keys("q")
	if h.m.mode != modeNormal || h.m.quitting {
		t.Fatal("a key did not close the log, or quit")
	}
	if strings.Contains(h.statusLine(), "m shows them") {
		t.Errorf("the error is still counted once read: %q", h.statusLine())
	}
}

// A line that cannot be sent stays in the input and says why.
func TestABadLineSaysWhy(t *testing.T) {
	h := newTestModel(t, Config{}, 120, 40)
	h.keys("c", "no target", "<enter>")
	if h.m.mode != modeCompose || !strings.Contains(h.hintBar(), "send> no target") || !strings.Contains(h.statusLine(), "start the line with #channel") {
		t.Errorf("a line without a target:\n%s", h.screen())
	}
}

// At 80 columns the ? screen shows every key, whole, on its first page.
func TestHelpShowsEveryKeyAt80Columns(t *testing.T) {
	h := newTestModel(t, Config{}, 80, 24)
	h.keys("?")
	s := h.screen()
	for _, col := range h.m.sh.keys.FullHelp() {
		for _, b := range col {
			k, d := b.Help().Key, b.Help().Desc
			found := false
			for _, l := range strings.Split(s, "\n") {
				if i := strings.Index(l, k+" "); i >= 0 && strings.Contains(l[i:], d) {
					found = true
				}
			}
			if !found {
				t.Errorf("%q (%s) is not on the help screen whole:\n%s", k, d, s)
			}
		}
	}
	if !strings.Contains(s, "more ↓") {
		t.Errorf("the help below the keys does not fit 80x24, and nothing says so:\n%s", s)
	}
	h.keys("G")
	if s := h.screen(); !strings.Contains(s, "MESSAGES") || !strings.Contains(s, "ALERTS  when an agent newly needs you no bell") || h.m.mode != modePage {
		t.Errorf("G did not scroll the help to its end:\n%s", s)
	}
	h.keys("<esc>")
	if h.m.mode != modeNormal {
		t.Error("esc did not close help")
	}
}

// A list that does not fit says how many rows it hides, and where.
func TestListsSayHowManyRowsAreHidden(t *testing.T) {
	h, f := seatHarness(t, Config{})
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	var peers []presence.Peer
	var seats []Seat
	var personas []string
	for i := range 20 {
		name := fmt.Sprintf("p%02d", i)
		peers = append(peers, peer(name, presence.Waiting, time.Duration(i)*time.Minute))
		seats = append(seats, running(name, "waiting", time.Duration(i)*time.Minute))
		personas = append(personas, name)
	}
	h.batch(0, batchMsg{PeersChanged: true, Peers: peers, SeatsChanged: true, Census: Census{Managers: 1, Seats: seats}})
	var roster, lane, band []string
	inSeats := false
	for _, l := range strings.Split(h.screen(), "\n") {
		if strings.HasPrefix(l, "SEATS") {
			inSeats = true
		}
		left, right, _ := strings.Cut(l, "│")
		switch {
		case inSeats:
			band = append(band, left)
		default:
			roster, lane = append(roster, left), append(lane, right)
		}
	}
	count := func(lines []string, prefix string) int {
		n := 0
		for _, l := range lines {
			if r := strings.TrimPrefix(l, prefix); r != l && (strings.HasPrefix(r, "p") || strings.HasPrefix(r, "›p")) {
				n++
			}
		}
		return n
	}
	want := func(where string, lines []string, rows int, more string) {
		t.Helper()
		if rows == 0 || rows == 20 || !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, fmt.Sprintf(more, 20-rows)) }) {
			t.Errorf("%s shows %d of 20 rows and does not say %q:\n%s", where, rows, fmt.Sprintf(more, 20-rows), h.screen())
		}
	}
	want("the roster", roster, count(roster, "◐ "), "+%d more ↓")
	want("the lane", lane, count(lane, "◐ "), "+%d more")
	want("the seats list", band, count(band, "● "), "+%d more ↓")
	h.keys("G")
	if s := h.screen(); !strings.Contains(s, "more ↑") || !strings.Contains(s, "›p19") {
		t.Errorf("at the roster's end:\n%s", s)
	}
	f.personas = personas
	h.run(h.keys("s"))
	if s := h.screen(); !strings.Contains(s, "more ↓") || !strings.Contains(s, "› p00") {
		t.Errorf("the picker does not say how many personas are hidden:\n%s", s)
	}
}
