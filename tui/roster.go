package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// rosterView lists every peer with a glyph that is shape and colour and
// the age of each fact. It sorts on a roster change, never in View.
type rosterView struct {
	sh      *shared
	peers   []presence.Peer // sorted: working, waiting, idle, offline, then name
	rows    []int           // indices into peers that pass the filter
	seats   map[string]Seat // by peer id: the progress observations
	agents  int
	eps     int
	filter  textinput.Model
	cursor  int
	offset  int
	none    bool // the dashboard's selection is no peer of this list: no cursor
	focused bool
	w, h    int
}

func newRosterView(sh *shared) *rosterView {
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "name, role, status or text: roster, seats and feed"
	return &rosterView{sh: sh, filter: ti, focused: true}
}

func (r *rosterView) SetSize(w, h int) {
	r.w, r.h = w, h
	r.filter.Width = max(w-2, 1)
	r.clamp()
}

// setPeers replaces the roster and keeps the cursor on the same peer.
func (r *rosterView) setPeers(ps []presence.Peer) {
	var keep string
	if r.cursor < len(r.rows) {
		keep = r.peers[r.rows[r.cursor]].ID
	}
	slices.SortFunc(ps, func(a, b presence.Peer) int {
		return cmp.Or(cmp.Compare(statusRank(&a), statusRank(&b)),
			cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.ID, b.ID))
	})
	r.peers, r.agents, r.eps = ps, 0, 0
	for i := range ps {
		if ps[i].Record.Card.Kind == presence.KindEndpoint {
			r.eps++
		} else {
			r.agents++
		}
	}
	r.refilter()
	for i, idx := range r.rows {
		if r.peers[idx].ID == keep {
			r.cursor = i
		}
	}
	r.clamp()
}

func (r *rosterView) setSeats(seats []Seat) {
	r.seats = make(map[string]Seat, len(seats))
	for _, s := range seats {
		if old, ok := r.seats[s.PeerID]; s.PeerID != "" && (!ok || !old.Running()) {
			r.seats[s.PeerID] = s // a running seat wins over an exited one of the same identity
		}
	}
}

func (r *rosterView) refilter() {
	q := r.query()
	r.sh.filter = q
	r.rows = r.rows[:0]
	for i := range r.peers {
		p := &r.peers[i]
		_, _, status := r.look(p)
		if q == "" || matchAny(q, p.Name, p.Role, p.Record.Activity, string(p.Status), status, harnessOf(p.Record.Card)) {
			r.rows = append(r.rows, i)
		}
	}
}

// query is the filter as typed, lowercased.
func (r *rosterView) query() string { return strings.ToLower(strings.TrimSpace(r.filter.Value())) }

// filtering reports whether a filter is set (typed or applied).
func (r *rosterView) filtering() bool { return r.filter.Value() != "" }

// startFilter focuses the filter input.
func (r *rosterView) startFilter() tea.Cmd { return r.filter.Focus() }

// updateFilter feeds a key to the filter input; enter keeps the filter,
// esc clears it. It reports whether the filter is still being typed.
func (r *rosterView) updateFilter(msg tea.KeyMsg) (bool, tea.Cmd) {
	switch {
	case key.Matches(msg, r.sh.keys.Send):
		r.filter.Blur()
		return false, nil
	case key.Matches(msg, r.sh.keys.Cancel):
		r.filter.Blur()
		r.filter.SetValue("")
		r.refilter()
		r.clamp()
		return false, nil
	}
	var cmd tea.Cmd
	r.filter, cmd = r.filter.Update(msg)
	r.refilter()
	r.cursor, r.offset = 0, 0
	return true, cmd
}

// clearFilter drops an applied filter.
func (r *rosterView) clearFilter() {
	r.filter.SetValue("")
	r.refilter()
	r.clamp()
}

// move handles a navigation key; it reports whether it used it.
func (r *rosterView) move(msg tea.KeyMsg) bool {
	k := r.sh.keys
	page := max(r.listHeight()-1, 1)
	switch {
	case key.Matches(msg, k.Up):
		r.cursor--
	case key.Matches(msg, k.Down):
		r.cursor++
	case key.Matches(msg, k.Top):
		r.cursor = 0
	case key.Matches(msg, k.Bottom):
		r.cursor = len(r.rows) - 1
	case key.Matches(msg, k.PageUp):
		r.cursor -= page
	case key.Matches(msg, k.PageDown):
		r.cursor += page
	default:
		return false
	}
	r.none = false
	r.clamp()
	return true
}

// listHeight is the rows left for peers under the title and column line,
// less one that says how many are hidden when they do not all fit.
func (r *rosterView) listHeight() int {
	h := r.h - 2
	if r.filter.Focused() {
		h--
	}
	if len(r.rows) > h {
		h--
	}
	return max(h, 0)
}

func (r *rosterView) clamp() {
	r.cursor = max(min(r.cursor, len(r.rows)-1), 0)
	lh := r.listHeight()
	if r.cursor < r.offset {
		r.offset = r.cursor
	}
	if lh > 0 && r.cursor >= r.offset+lh {
		r.offset = r.cursor - lh + 1
	}
	r.offset = max(min(r.offset, len(r.rows)-lh), 0)
}

// seatOf is the seat a peer holds: a running one before one that exited.
func (r *rosterView) seatOf(id string) (Seat, bool) {
	s, ok := r.seats[id]
	return s, ok && id != ""
}

// selected is the peer under the cursor, unless the selection is no peer
// of this list.
func (r *rosterView) selected() (presence.Peer, bool) {
	if r.none || r.cursor >= len(r.rows) {
		return presence.Peer{}, false
	}
	return r.peers[r.rows[r.cursor]], true
}

// look is a peer's glyph, its colour and its status claim, with what its
// seat shows overlaid: a working peer's progress is observed from its
// seat's output or said to be unknown, a silent one is stalled (no green
// dot), and a seat that crashed says so in red, not in the grey of a stop.
func (r *rosterView) look(p *presence.Peer) (string, lipgloss.Style, string) {
	st := &r.sh.styles
	now := r.sh.now
	s, seated := r.seats[p.ID]
	switch {
	case p.Offline:
		if how, ok := s.crash(); seated && ok {
			return glyphCrashed, st.Crashed, "crashed (" + how + ")"
		}
		if p.OfflineReason != "" {
			return glyph(p), st.Offline, "offline (" + p.OfflineReason + ")"
		}
		return glyph(p), st.Offline, "offline"
	case p.Status == presence.Working:
		quiet, ok := s.quiet(now)
		switch {
		case !seated || !ok:
			return glyph(p), st.glyphStyle(p), "working · progress unknown"
		case quiet > StallAfter:
			return glyphStalled, st.Stalled, "working · stalled " + minutes(quiet)
		case !s.LastAnswer.IsZero() && s.Usage != nil:
			return glyph(p), st.glyphStyle(p), "working · answered " + age(now, s.LastAnswer) + " ago"
		case s.LastOutput.IsZero():
			return glyph(p), st.glyphStyle(p), "working · progress unknown"
		}
		return glyph(p), st.glyphStyle(p), "working · output " + age(now, s.LastOutput) + " ago"
	case seated && s.Running():
		if quiet, stalled := s.stalled(now); stalled {
			// Messages wait to be typed into a seat silent for long,
			// whatever its status claims.
			return glyphStalled, st.Stalled, string(p.Status) + " · stalled " + minutes(quiet)
		}
		if p.Status == presence.Waiting && p.Record.Condition != nil && p.Record.Condition.Code != "" {
			return glyph(p), st.glyphStyle(p), "waiting (" + wire.CleanLabel(p.Record.Condition.Code) + ")"
		}
	case p.Status == presence.Waiting && p.Record.Condition != nil && p.Record.Condition.Code != "":
		return glyph(p), st.glyphStyle(p), "waiting (" + wire.CleanLabel(p.Record.Condition.Code) + ")"
	}
	return glyph(p), st.glyphStyle(p), string(p.Status)
}

// harnessW is the harness column: "opencode" fits, a longer name is cut.
const harnessW = 8

// cols are the widths of a roster row; 0 drops a column.
type cols struct{ name, role, tag, status, act, ages int }

// columns fits the row to the width, dropping role, harness tag and
// activity before the status claim and the ages, which are never dropped.
func (r *rosterView) columns() cols {
	c := cols{name: 12, status: 26, ages: 12}
	rest := r.w - 2 - (c.name + 1) - c.status - c.ages
	if rest < 0 {
		c.status = max(c.status+rest, 10)
		return c
	}
	if rest >= harnessW+1+12 {
		c.tag, rest = harnessW, rest-harnessW-1
	}
	if rest >= 11+14 {
		c.role, rest = 10, rest-11
	}
	if rest >= 9 {
		c.act = rest - 1
	}
	return c
}

func (r *rosterView) View() string {
	st := &r.sh.styles
	title := "ROSTER · " + render.Plural(r.agents, "agent") + " · " + render.Plural(r.eps, "endpoint")
	if r.filtering() {
		title += fmt.Sprintf(" · filter %q: %d shown", r.filter.Value(), len(r.rows))
	}
	titleStyle := st.Title
	if !r.focused {
		titleStyle = st.Dim
	}
	lines := make([]string, 0, r.h)
	lines = append(lines, titleStyle.Render(cut(title, r.w)))
	if r.filter.Focused() {
		lines = append(lines, r.filter.View())
	}
	c := r.columns()
	head := "  " + pad("NAME", c.name) + " "
	if c.role > 0 {
		head += pad("ROLE", c.role) + " "
	}
	if c.tag > 0 {
		head += pad("HARNESS", c.tag) + " "
	}
	head += pad("STATUS", c.status)
	if c.act > 0 {
		head += " " + pad("ACTIVITY", c.act)
	}
	head += fmt.Sprintf(" %5s %5s", "FOR", "HEARD")
	lines = append(lines, st.Dim.Render(cut(head, r.w)))
	if len(r.peers) == 0 {
		lines = append(lines, st.Dim.Render("(nobody present)"))
		return block(lines, r.w, r.h)
	}
	if len(r.rows) == 0 {
		lines = append(lines, st.Dim.Render("(no peer matches the filter)"))
		return block(lines, r.w, r.h)
	}
	end := min(r.offset+r.listHeight(), len(r.rows))
	for i := r.offset; i < end; i++ {
		lines = append(lines, r.row(&r.peers[r.rows[i]], i == r.cursor && !r.none, c))
	}
	if r.offset > 0 || end < len(r.rows) {
		lines = append(lines, st.Dim.Render(moreLine(r.offset, len(r.rows)-end)))
	}
	return block(lines, r.w, r.h)
}

// row renders one peer; every fact carries its age.
func (r *rosterView) row(p *presence.Peer, selected bool, c cols) string {
	st := &r.sh.styles
	now := r.sh.now
	g, style, status := r.look(p)
	activity := oneLine(wire.CleanLabel(p.Record.Activity))
	if activity != "" && p.Record.ActivitySince > 0 && !p.Offline {
		activity += " (" + age(now, msTime(p.Record.ActivitySince)) + ")"
	}
	if att := p.Record.Attention; att != "" && att != presence.Open && !p.Offline {
		activity = "[" + string(att) + "] " + activity
	}
	var b strings.Builder
	b.WriteString(style.Render(g))
	b.WriteString(" ")
	nw, sw := c.name, c.status
	name := pad(wire.CleanLabel(p.Name), nw)
	if selected && r.focused {
		// A marker as well as reverse video: without colour the cursor must still show.
		b.WriteString(st.Cursor.Render(pad("›"+wire.CleanLabel(p.Name), nw)))
	} else if selected {
		// The cursor of a list without the keys: kept, and seen, but not lit.
		b.WriteString(st.Dim.Render(pad("›"+wire.CleanLabel(p.Name), nw)))
	} else if p.Offline {
		b.WriteString(st.Offline.Render(name))
	} else {
		b.WriteString(st.Name(p.Name).Render(name))
	}
	b.WriteString(" ")
	if c.role > 0 {
		b.WriteString(pad(wire.CleanLabel(p.Role), c.role) + " ")
	}
	if c.tag > 0 {
		tag := harnessOf(p.Record.Card)
		if s, ok := r.seats[p.ID]; ok && tag == "" {
			tag = s.Harness // a seat's card need not say; its manager knows
		}
		b.WriteString(pad(tag, c.tag) + " ")
	}
	b.WriteString(style.Render(pad(status, sw)))
	if c.act > 0 {
		b.WriteString(" " + pad(activity, c.act))
	}
	b.WriteString(st.Dim.Render(fmt.Sprintf(" %5s %5s", age(now, p.StatusSince), age(now, p.Heard()))))
	return b.String()
}

func (r *rosterView) ShortHelp() []key.Binding {
	return []key.Binding{r.sh.keys.Up, r.sh.keys.Down, r.sh.keys.Filter}
}

func (r *rosterView) FullHelp() [][]key.Binding { return [][]key.Binding{r.ShortHelp()} }
