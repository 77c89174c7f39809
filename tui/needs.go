package tui

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/key"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// needsView is the NEEDS YOU lane: seats whose mesh status is waiting,
// and waiting agents that are no seat, oldest first.
type needsView struct {
	sh      *shared
	waiting []laneEntry
	seen    map[string]bool // ids in the lane at the last rebuild
	w, h    int
}

// laneEntry is one agent waiting on a person.
type laneEntry struct {
	id    string // the presence id; "seat:<name>" for a seat without one
	name  string
	since time.Time
	what  string
}

func newNeedsView(sh *shared) *needsView { return &needsView{sh: sh, seen: map[string]bool{}} }

func (n *needsView) SetSize(w, h int) { n.w, n.h = w, h }

// rebuild makes the lane from the roster and the seats and returns how
// many entered it. With quiet set nobody enters: they were waiting before
// the dashboard looked (the first roster, the first census).
func (n *needsView) rebuild(peers []presence.Peer, seats []Seat, quiet bool) int {
	n.waiting = n.waiting[:0]
	bySeat := make(map[string]bool, len(seats))
	byID := make(map[string]*presence.Peer, len(peers))
	for i := range peers {
		byID[peers[i].ID] = &peers[i]
	}
	for i := range seats {
		s := &seats[i]
		if s.PeerID != "" {
			bySeat[s.PeerID] = true
		}
		if s.Mesh != string(presence.Waiting) {
			continue
		}
		e := laneEntry{id: s.PeerID, name: s.Name, since: s.MeshSince, what: wire.CleanLabel(s.Activity)}
		if e.id == "" {
			e.id = "seat:" + s.Name
		}
		if p, ok := byID[s.PeerID]; ok && waitingFor(p) != "" {
			e.what = waitingFor(p)
		}
		n.waiting = append(n.waiting, e)
	}
	for i := range peers {
		p := &peers[i]
		if p.Offline || p.Status != presence.Waiting || p.Record.Card.Kind == presence.KindEndpoint || bySeat[p.ID] {
			continue
		}
		n.waiting = append(n.waiting, laneEntry{id: p.ID, name: wire.CleanLabel(p.Name), since: p.StatusSince, what: waitingFor(p)})
	}
	slices.SortFunc(n.waiting, func(a, b laneEntry) int {
		return cmp.Or(a.since.Compare(b.since), cmp.Compare(a.name, b.name))
	})
	entered := 0
	now := make(map[string]bool, len(n.waiting))
	for _, e := range n.waiting {
		now[e.id] = true
		if !quiet && !n.seen[e.id] {
			entered++
		}
	}
	n.seen = now
	return entered
}

// waitingFor is what a peer says it waits for: its condition, else its
// activity.
func waitingFor(p *presence.Peer) string {
	if c := p.Record.Condition; c != nil && c.Code != "" {
		what := wire.CleanLabel(c.Code)
		if c.Message != "" {
			what += ": " + wire.CleanLabel(c.Message)
		}
		return what
	}
	return wire.CleanLabel(p.Record.Activity)
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
	for _, e := range n.waiting[:shown] {
		what := e.what
		if what == "" {
			what = "waiting for input"
		}
		line := st.Waiting.Render("◐") + " " + st.Name(e.name).Render(cut(e.name, 16)) +
			"  " + st.Waiting.Render("waited "+age(n.sh.now, e.since)) + "  " + oneLine(what)
		lines = append(lines, line)
	}
	if more := len(n.waiting) - shown; more > 0 {
		lines = append(lines, st.Dim.Render(fmt.Sprintf("↓%d more", more)))
	}
	return block(lines, n.w, n.h)
}

func (n *needsView) ShortHelp() []key.Binding  { return nil }
func (n *needsView) FullHelp() [][]key.Binding { return nil }
