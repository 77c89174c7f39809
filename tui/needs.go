package tui

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// need is why an agent waits on its person.
type need int

const (
	needWaiting   need = iota // its status says waiting
	needStalled               // it says working and has printed nothing for over StallAfter
	needCrashed               // its process ended on its own, badly
	needHeld                  // messages for it are held while its person types
	needUnread                // replies to the person wait unread
	needSuspended             // its process is stopped by a signal
	needUncertain             // its spawn ended uncertain: running, never shown up
	needBudget                // it spent its persona's budget of tokens
)

// word is the need as the lane says it, before its age.
func (n need) word() string {
	return [...]string{"waiting", "stalled", "crashed", "held", "unread", "stopped", "uncertain", "over budget"}[n]
}

// needsView is the NEEDS YOU lane: every seat and agent that needs its
// person, each with its reason and how long, oldest first.
type needsView struct {
	sh      *shared
	waiting []laneEntry
	seen    map[string]bool // entry keys in the lane at the last rebuild
	unread  unreadReplies   // the operator's DM durable as last read (replies.go)
	feed    *feedView       // where the unread replies are shown
	w, h    int
}

// laneEntry is one agent needing its person.
type laneEntry struct {
	id    string // the presence id; the seat's key for a seat without one
	need  need
	name  string
	since time.Time // when the need began
	what  string    // the detail: what it waits for, how it ended
	// answer: its harness's hook holds the question, so p answers it
	// (the line says "p:" before the question).
	answer bool
}

func (e *laneEntry) key() string { return e.id + "|" + e.need.word() }

func newNeedsView(sh *shared) *needsView { return &needsView{sh: sh, seen: map[string]bool{}} }

func (n *needsView) SetSize(w, h int) { n.w, n.h = w, h }

// rebuild makes the lane from the roster and the seats and returns the
// entries new to it. With quiet set none is new: they needed their person
// before the dashboard looked (the first roster, the first census).
func (n *needsView) rebuild(peers []presence.Peer, seats []Seat, quiet bool) []laneEntry {
	now := n.sh.now
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
		id := s.PeerID
		if id == "" {
			id = "seat:" + s.key()
		}
		if how, ok := s.crash(); ok {
			// A crash is its lifecycle's: a new seat of the name is another.
			n.waiting = append(n.waiting, laneEntry{id: "seat:" + s.key(), need: needCrashed, name: s.Name, since: s.Exited, what: how})
			continue
		}
		if s.Running() && s.State == "uncertain" {
			n.waiting = append(n.waiting, laneEntry{id: "seat:" + s.key(), need: needUncertain, name: s.Name, since: s.Started,
				what: "spawn never came up"})
		}
		if s.Running() && !s.Suspended.IsZero() {
			n.waiting = append(n.waiting, laneEntry{id: id, need: needSuspended, name: s.Name, since: s.Suspended,
				what: fmt.Sprintf("kill -CONT %d resumes", s.PID)})
		}
		if e, ok := s.overBudget(); ok {
			n.waiting = append(n.waiting, e)
		}
		if why, ok := s.held(); ok {
			n.waiting = append(n.waiting, laneEntry{id: id, need: needHeld, name: s.Name, since: s.OldestWaiting, what: why})
		}
		if d, ok := s.stalled(now); ok {
			what := "no output for " + minutes(d)
			if _, ok := s.answered(); ok {
				what = "no answer for " + minutes(d)
			}
			switch {
			case s.Mesh != "working":
				what = fmt.Sprintf("%d waiting, ", s.Waiting-s.PullOnly) + what
			case !s.MeshSince.IsZero():
				what = "working " + age(now, s.MeshSince) + ", " + what
			}
			n.waiting = append(n.waiting, laneEntry{id: id, need: needStalled, name: s.Name, since: now.Add(-d), what: what})
		}
		if asks, ok := s.asking(); ok {
			// Its harness's own word: what it asks, since when, even
			// before it is on the roster (a dialog at its start).
			n.waiting = append(n.waiting, laneEntry{id: id, name: s.Name, since: s.AsksSince, what: wire.CleanLabel(asks), answer: s.Answerable})
			continue
		}
		if s.Mesh != string(presence.Waiting) || !s.Running() {
			continue
		}
		e := laneEntry{id: id, name: s.Name, since: s.MeshSince, what: wire.CleanLabel(s.Activity)}
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
	if e, ok := n.unreadEntry(n.feed); ok {
		n.waiting = append(n.waiting, e)
	}
	slices.SortFunc(n.waiting, func(a, b laneEntry) int {
		return cmp.Or(a.since.Compare(b.since), cmp.Compare(a.name, b.name), cmp.Compare(a.need, b.need))
	})
	var entered []laneEntry
	seen := make(map[string]bool, len(n.waiting))
	for _, e := range n.waiting {
		seen[e.key()] = true
		if !quiet && !n.seen[e.key()] {
			entered = append(entered, e)
		}
	}
	n.seen = seen
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

// glyph is the need's shape and colour, the ones its rows use too.
func (n need) glyph(st *Styles) (string, lipgloss.Style) {
	switch n {
	case needStalled:
		return glyphStalled, st.Stalled
	case needCrashed:
		return glyphCrashed, st.Crashed
	case needHeld:
		return glyphHeld, st.Waiting
	case needUnread:
		return glyphUnread, st.Waiting
	case needSuspended:
		return glyphSuspended, st.Stalled
	case needUncertain:
		return "?", st.Waiting
	case needBudget:
		return "$", st.Stalled
	}
	return "◐", st.Waiting
}

// when is the entry's reason and how long: "waiting 4m", "stalled 7m".
func (e *laneEntry) when(now time.Time) string {
	if e.need == needStalled {
		return e.need.word() + " " + minutes(now.Sub(e.since))
	}
	return e.need.word() + " " + age(now, e.since)
}

// detail is what the entry waits for or how it ended.
func (e *laneEntry) detail() string {
	if e.what == "" && e.need == needWaiting {
		return "waiting for input"
	}
	return oneLine(e.what)
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
		g, style := e.need.glyph(st)
		line := style.Render(g) + " " + st.Name(e.name).Render(cut(e.name, 16)) + "  " + style.Render(e.when(n.sh.now))
		if e.answer {
			line += "  " + st.Key.Render("p:")
		}
		if what := e.detail(); what != "" {
			line += "  " + what
		}
		lines = append(lines, line)
	}
	if more := len(n.waiting) - shown; more > 0 {
		lines = append(lines, st.Dim.Render(fmt.Sprintf("+%d more", more)))
	}
	return block(lines, n.w, n.h)
}

// notice is what a desktop notification says of the entries new to the
// lane.
func notice(now time.Time, entered []laneEntry) string {
	if len(entered) == 1 {
		e := &entered[0]
		msg := wire.CleanLabel(e.name) + " needs you: " + e.when(now)
		if what := e.detail(); what != "" {
			msg += ", " + what
		}
		return msg
	}
	out := fmt.Sprintf("%d need you:", len(entered))
	for i, e := range entered {
		if i > 0 {
			out += ";"
		}
		out += " " + wire.CleanLabel(e.name) + " (" + e.need.word() + ")"
	}
	return out
}

func (n *needsView) ShortHelp() []key.Binding  { return nil }
func (n *needsView) FullHelp() [][]key.Binding { return nil }
