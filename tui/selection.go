package tui

import (
	"strings"

	"github.com/cotal-go/cotal/mesh/wire"
)

// One selection for the roster and SEATS: a peer that holds a seat and
// its seat are one pick, shown by the cursor of both lists (lit in the one
// with the keys, dim in the other). Moving in either list moves the other
// to the same identity, or leaves it with no cursor when the pick is not
// in it (a peer without a seat, a seat without a peer). The seat keys act
// on that pick, whichever panel has the keys.

// linkFromRoster makes the roster's pick the selection.
func (m *Model) linkFromRoster() {
	p, ok := m.roster.selected()
	if !ok {
		return // nobody to pick: SEATS keeps its own
	}
	m.picked = panelRoster
	s, ok := m.roster.seatOf(p.ID)
	m.seats.none = !ok || !m.seats.selectKey(s.key())
}

// linkFromSeats makes the SEATS pick the selection.
func (m *Model) linkFromSeats() {
	s, ok := m.seats.selected()
	if !ok {
		return // no seat to pick: the roster keeps its own
	}
	m.picked = panelSeats
	m.roster.none = s.PeerID == "" || !m.roster.selectID(s.PeerID)
}

// relink puts both lists back on the selection after they changed (a
// census, a roster, a filter): from the list it was last made in.
func (m *Model) relink() {
	if m.picked == panelSeats {
		if !m.seats.none {
			m.linkFromSeats()
		}
		return
	}
	if !m.roster.none {
		m.linkFromRoster()
	}
}

// selectID moves the roster's cursor to the peer of that id.
func (r *rosterView) selectID(id string) bool {
	for i, idx := range r.rows {
		if r.peers[idx].ID == id {
			r.cursor, r.none = i, false
			r.clamp()
			return true
		}
	}
	return false
}

// jumpToNeed selects the seat (or peer) of the next NEEDS YOU entry after
// the one jumped to last, and says where it went.
func (m *Model) jumpToNeed() {
	n := len(m.needs.waiting)
	if n == 0 {
		m.status.setNote("nothing needs you")
		return
	}
	for i := range n {
		e := m.needs.waiting[(m.needJump+i)%n]
		if m.selectEntry(e) {
			m.needJump = (m.needJump + i + 1) % n
			m.status.setNote("→ " + wire.CleanLabel(e.name) + ": " + e.when(m.sh.now))
			m.syncFocus()
			return
		}
	}
	m.status.setError("no seat or peer of NEEDS YOU is in the lists (a filter hides them?)")
}

// selectEntry selects what a NEEDS YOU entry is about; false when it is
// in neither list.
func (m *Model) selectEntry(e laneEntry) bool {
	if k, ok := strings.CutPrefix(e.id, "seat:"); ok {
		if m.seats.selectKey(k) {
			m.seats.none, m.seats.want = false, ""
			m.setPanel(panelSeats)
			m.linkFromSeats()
			return true
		}
		return false
	}
	if m.roster.selectID(e.id) {
		m.setPanel(panelRoster)
		m.linkFromRoster()
		return true
	}
	for i := range m.seats.seats {
		if m.seats.seats[i].PeerID == e.id {
			m.seats.cursor, m.seats.none, m.seats.want = i, false, ""
			m.seats.clamp()
			if !m.seats.compact() {
				m.setPanel(panelSeats)
			}
			m.linkFromSeats()
			return true
		}
	}
	return false
}

// filtered is the seats of the census that pass the / filter: by name,
// persona, harness, process or mesh state, activity, or a NEEDS YOU word
// (stalled, crashed, held, suspended, uncertain).
func (s *seatsView) filtered() []Seat {
	q := s.sh.filter
	if q == "" {
		return s.all
	}
	out := make([]Seat, 0, len(s.all))
	for i := range s.all {
		seat := &s.all[i]
		words := []string{seat.Name, seat.Persona, seat.Harness, seat.Process, seat.State, seat.Mesh, seat.Activity}
		if _, ok := seat.crash(); ok {
			words = append(words, "crashed")
		}
		if _, ok := seat.stalled(s.sh.now); ok {
			words = append(words, "stalled")
		}
		if _, ok := seat.held(); ok {
			words = append(words, "held")
		}
		if !seat.Suspended.IsZero() {
			words = append(words, "suspended", "stopped")
		}
		if matchAny(q, words...) {
			out = append(out, *seat)
		}
	}
	return out
}

// refilter applies the / filter again, keeping the cursor on its seat.
func (s *seatsView) refilter() {
	keep, had := s.selected()
	s.seats = s.filtered()
	if had && !s.selectKey(keep.key()) {
		s.none = true
	}
	s.clamp()
}

// matchAny reports whether any of the texts holds q (lowercased).
func matchAny(q string, texts ...string) bool {
	for _, t := range texts {
		if strings.Contains(strings.ToLower(t), q) {
			return true
		}
	}
	return false
}

// filterChanged applies the / filter to SEATS and the feed as it is typed.
func (m *Model) filterChanged() {
	m.seats.refilter()
	m.feed.scroll = 0
	m.relink()
	m.syncFocus()
}

// clearFilter drops the / filter everywhere.
func (m *Model) clearFilter() {
	m.roster.clearFilter()
	m.filterChanged()
}
