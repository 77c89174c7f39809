package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// needsView is the NEEDS YOU lane: agents waiting on a person, oldest
// first. Until the manager says which seats wait on a person, every
// waiting agent counts.
type needsView struct {
	sh      *shared
	waiting []presence.Peer
	seen    map[string]bool // ids in the lane at the last roster
	primed  bool            // the first roster has been seen
	w, h    int
}

func newNeedsView(sh *shared) *needsView { return &needsView{sh: sh, seen: map[string]bool{}} }

func (n *needsView) SetSize(w, h int) { n.w, n.h = w, h }

// setPeers rebuilds the lane and returns how many peers entered it. The
// first roster enters nobody: they were waiting before we looked.
func (n *needsView) setPeers(ps []presence.Peer) int {
	n.waiting = n.waiting[:0]
	for _, p := range ps {
		if !p.Offline && p.Status == presence.Waiting && p.Record.Card.Kind != presence.KindEndpoint {
			n.waiting = append(n.waiting, p)
		}
	}
	slices.SortFunc(n.waiting, func(a, b presence.Peer) int {
		return cmp.Or(a.StatusSince.Compare(b.StatusSince), cmp.Compare(a.Name, b.Name))
	})
	entered := 0
	now := make(map[string]bool, len(n.waiting))
	for _, p := range n.waiting {
		now[p.ID] = true
		if n.primed && !n.seen[p.ID] {
			entered++
		}
	}
	n.seen, n.primed = now, true
	return entered
}

func (n *needsView) View() string {
	st := &n.sh.styles
	lines := []string{st.Title.Render(fmt.Sprintf("NEEDS YOU · %d", len(n.waiting)))}
	if len(n.waiting) == 0 {
		lines = append(lines, st.Working.Render("nothing waiting - all clear ✓"))
		return block(lines, n.w, n.h)
	}
	room := n.h - 1
	shown := len(n.waiting)
	if shown > room {
		shown = max(room-1, 0)
	}
	for _, p := range n.waiting[:shown] {
		what := "waiting for input"
		if c := p.Record.Condition; c != nil && c.Code != "" {
			what = wire.CleanLabel(c.Code)
			if c.Message != "" {
				what += ": " + wire.CleanLabel(c.Message)
			}
		} else if a := wire.CleanLabel(p.Record.Activity); a != "" {
			what = a
		}
		line := st.Waiting.Render("◐") + " " + st.Name(p.Name).Render(cut(wire.CleanLabel(p.Name), 16)) +
			"  " + st.Waiting.Render("waited "+age(n.sh.now, p.StatusSince)) + "  " + oneLine(what)
		lines = append(lines, line)
	}
	if more := len(n.waiting) - shown; more > 0 {
		lines = append(lines, st.Dim.Render(fmt.Sprintf("↓%d more", more)))
	}
	return block(lines, n.w, n.h)
}

func (n *needsView) ShortHelp() []key.Binding  { return nil }
func (n *needsView) FullHelp() [][]key.Binding { return nil }

// seatsView lists the manager's seats. Without a manager it says so.
type seatsView struct {
	sh    *shared
	seats []Seat
	w, h  int
}

func newSeatsView(sh *shared) *seatsView { return &seatsView{sh: sh} }

func (s *seatsView) SetSize(w, h int) { s.w, s.h = w, h }

func (s *seatsView) setSeats(seats []Seat) {
	s.seats = slices.Clone(seats)
	slices.SortFunc(s.seats, func(a, b Seat) int { return cmp.Compare(a.Name, b.Name) })
}

func (s *seatsView) View() string {
	st := &s.sh.styles
	lines := []string{st.Title.Render(fmt.Sprintf("SEATS · %d", len(s.seats)))}
	switch {
	case s.sh.cfg.SeatSource == nil && len(s.seats) == 0:
		lines = append(lines, st.Dim.Render("no manager yet"))
	case len(s.seats) == 0:
		lines = append(lines, st.Dim.Render("no seats"))
	}
	for _, seat := range s.seats {
		var b strings.Builder
		b.WriteString(st.Name(seat.Name).Render(pad(wire.CleanLabel(seat.Name), 14)))
		fmt.Fprintf(&b, " %-8s", cut(seat.State, 8))
		if seat.PID > 0 {
			fmt.Fprintf(&b, " pid %d", seat.PID)
		}
		b.WriteString(" output " + age(s.sh.now, seat.LastOutput))
		if seat.Attached {
			b.WriteString(" · attached")
		}
		lines = append(lines, b.String())
	}
	return block(lines, s.w, s.h)
}

func (s *seatsView) ShortHelp() []key.Binding  { return nil }
func (s *seatsView) FullHelp() [][]key.Binding { return nil }
