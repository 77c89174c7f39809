package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// seatsView is the SEATS band: the managers' seats with process and mesh
// state side by side on the left, the selected seat's screen on the right.
type seatsView struct {
	sh       *shared
	seats    []Seat // sorted by name, then manager; those that pass the filter
	all      []Seat // every seat of the census but the removed ones, sorted
	none     bool   // the dashboard's selection is no seat of this list: no cursor
	known    bool   // a census has arrived
	managers int
	missing  []string
	declared map[string]bool // the seats the manifest declares
	cursor   int
	offset   int
	removed  map[string]bool // exited seats the person took off the list, by key
	hidden   int             // how many of them the census still reports
	want     string          // a seat to select when it appears (just spawned), until the person moves
	shown    Seat            // the seat whose screen the preview shows
	showing  bool            // shown is set
	shot     *screenShot     // the shown seat's last screen
	focused  bool
	w, h     int
}

func newSeatsView(sh *shared) *seatsView { return &seatsView{sh: sh, removed: map[string]bool{}} }

func (s *seatsView) SetSize(w, h int) {
	s.w, s.h = w, h
	s.clamp()
}

// compact reports whether the band needs only its title and one line.
func (s *seatsView) compact() bool { return len(s.all) == 0 }

// setCensus replaces the seats and keeps the cursor on the same seat, by
// its lifecycle and manager, never by its row or its name alone; or moves
// it to the one just spawned, unless the person has moved it since.
func (s *seatsView) setCensus(c Census) {
	keep, had := s.selected()
	s.known, s.managers, s.missing = true, c.Managers, c.Missing
	s.declared = map[string]bool{}
	for _, n := range c.Declared {
		s.declared[n] = true
	}
	s.all, s.hidden = make([]Seat, 0, len(c.Seats)), 0
	for _, seat := range c.Seats {
		if s.removed[seat.key()] && !seat.Running() {
			s.hidden++
			continue
		}
		s.all = append(s.all, seat)
	}
	slices.SortFunc(s.all, func(a, b Seat) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Manager, b.Manager), a.Started.Compare(b.Started), cmp.Compare(a.UID, b.UID))
	})
	s.seats = s.filtered()
	switch {
	case s.want != "" && s.selectName(s.want):
		s.want = ""
	case had && s.selectKey(keep.key()):
	case had:
		s.selectName(keep.Name) // its row is gone: the seat that took its name
	}
	s.clamp()
}

// remove takes an exited seat off the list; a running one never goes.
func (s *seatsView) remove(seat Seat) bool {
	if seat.Running() {
		return false
	}
	s.removed[seat.key()] = true
	n := len(s.all)
	s.all = slices.DeleteFunc(s.all, func(x Seat) bool { return x.key() == seat.key() })
	s.seats = s.filtered()
	s.hidden += n - len(s.all)
	s.clamp()
	return true
}

// selectKey moves the cursor to the seat of that key.
func (s *seatsView) selectKey(k string) bool {
	for i := range s.seats {
		if s.seats[i].key() == k {
			s.cursor = i
			s.clamp()
			return true
		}
	}
	return false
}

// selectName moves the cursor to the named seat, a running one first.
func (s *seatsView) selectName(name string) bool {
	found := -1
	for i := range s.seats {
		if s.seats[i].Name == name && (found < 0 || s.seats[i].Running()) {
			found = i
		}
	}
	if found >= 0 {
		s.cursor = found
		s.clamp()
	}
	return found >= 0
}

// selected is the seat under the cursor, unless the selection is no seat
// of this list.
func (s *seatsView) selected() (Seat, bool) {
	if s.none || s.cursor >= len(s.seats) {
		return Seat{}, false
	}
	return s.seats[s.cursor], true
}

// show makes the preview show a seat's screen.
func (s *seatsView) show(seat Seat, ok bool) {
	if ok && s.showing && seat.key() == s.shown.key() {
		s.shown = seat // the census may have news of it
		return
	}
	s.shown, s.showing, s.shot = seat, ok, nil
}

// setShot keeps a screen fetch if it is of the seat shown.
func (s *seatsView) setShot(shot *screenShot) {
	if s.showing && s.shown.Name == shot.Name && s.shown.Manager == shot.Manager {
		s.shot = shot
	}
}

// move handles a navigation key; it reports whether it used it.
func (s *seatsView) move(msg tea.KeyMsg) bool {
	k := s.sh.keys
	switch {
	case key.Matches(msg, k.Up):
		s.cursor--
	case key.Matches(msg, k.Down):
		s.cursor++
	case key.Matches(msg, k.Top):
		s.cursor = 0
	case key.Matches(msg, k.Bottom):
		s.cursor = len(s.seats) - 1
	default:
		return false
	}
	s.want = "" // the person's own pick wins over a spawn still on its way
	s.none = false
	s.clamp()
	return true
}

// listHeight is the rows left for seats under the title and column line,
// less one that says how many are hidden when they do not all fit.
func (s *seatsView) listHeight() int {
	h := s.h - 2
	if len(s.seats) > h {
		h--
	}
	return max(h, 1)
}

func (s *seatsView) clamp() {
	s.cursor = max(min(s.cursor, len(s.seats)-1), 0)
	lh := s.listHeight()
	if s.cursor < s.offset {
		s.offset = s.cursor
	}
	if s.cursor >= s.offset+lh {
		s.offset = s.cursor - lh + 1
	}
	s.offset = max(min(s.offset, len(s.seats)-lh), 0)
}

// widths of the list and the screen preview beside it.
func (s *seatsView) widths() (list, preview int) {
	list = max(s.w*5/8, min(s.w, 74))
	return list, max(s.w-list-1, 0)
}

func (s *seatsView) View() string {
	st := &s.sh.styles
	title := st.Title
	if !s.focused {
		title = st.Dim
	}
	head := fmt.Sprintf("SEATS · %d", len(s.seats))
	if n := s.hidden; n > 0 {
		head += fmt.Sprintf(" · %d exited removed from view (ps lists them)", n)
	}
	if n := len(s.missing); n > 0 {
		head += " · " + render.Plural(n, "manager") + " not answering: list incomplete"
	}
	if gone := s.undeclaredMissing(); len(gone) > 0 {
		head += " · declared, not running: " + strings.Join(gone, ", ")
	}
	if len(s.seats) == 0 {
		var why string
		switch {
		case s.sh.cfg.SeatSource == nil || (s.known && s.managers == 0 && len(s.missing) == 0):
			why = "no manager yet"
		case !s.known:
			why = "asking the managers…"
		default:
			why = "no seats · s spawns one from a persona"
		}
		return block([]string{title.Render(head), st.Dim.Render(why)}, s.w, s.h)
	}
	lw, pw := s.widths()
	lines := []string{title.Render(head), st.Dim.Render(fmt.Sprintf("  %-12s %-11s %4s %7s %-10s %4s %4s", "NAME", "PROCESS", "UP", "PID", "MESH", "FOR", "OUT"))}
	end := min(s.offset+s.listHeight(), len(s.seats))
	for i := s.offset; i < end; i++ {
		lines = append(lines, s.row(&s.seats[i], i == s.cursor && !s.none, s.focused))
	}
	if s.offset > 0 || end < len(s.seats) {
		lines = append(lines, st.Dim.Render(moreLine(s.offset, len(s.seats)-end)))
	}
	list := block(lines, lw, s.h)
	if pw < 10 {
		return list
	}
	sep := strings.TrimSuffix(strings.Repeat(st.Rule.Render("│")+"\n", s.h), "\n")
	return joinColumns(list, sep, s.preview(pw))
}

// row is one seat: process state, uptime, pid, mesh state and its age,
// last output; a disagreement between process and mesh is said in words.
func (s *seatsView) row(seat *Seat, selected, focused bool) string {
	st := &s.sh.styles
	now := s.sh.now
	var b strings.Builder
	process := seat.Process
	switch {
	case process == "":
		process = seat.State
	case seat.Running() && !seat.Suspended.IsZero():
		process = "suspended" // stopped by a signal; ps says "stopped (signal)"
	case seat.Running() && seat.State != "ready" && seat.State != "":
		process = seat.State
	default:
		process = strings.Replace(process, "killed SIG", "killed ", 1)
	}
	glyph, style := "●", st.Working
	_, crashed := seat.crash()
	_, stalled := seat.stalled(now)
	heldWhy, held := seat.held()
	switch {
	case crashed:
		glyph, style = glyphCrashed, st.Crashed
	case seat.Running() && !seat.Suspended.IsZero():
		glyph, style = glyphSuspended, st.Stalled
	case !seat.Running():
		glyph, style = "⨯", st.Offline
	case seat.State == "starting":
		glyph, style = "◌", st.Idle
	case seat.State == "uncertain":
		glyph, style = "?", st.Waiting
	case stalled:
		glyph, style = glyphStalled, st.Stalled
	case held:
		glyph, style = glyphHeld, st.Waiting
	}
	mark := " "
	if s.declared[seat.Name] {
		mark = st.Dim.Render(glyphDeclared) // the manifest declares it
	}
	b.WriteString(style.Render(glyph) + mark)
	name := wire.CleanLabel(seat.Name)
	switch {
	case selected && focused:
		b.WriteString(st.Cursor.Render(pad("›"+name, 12)))
	case selected:
		// The cursor of a list without the keys: kept, and seen, but not lit.
		b.WriteString(st.Name(seat.Name).Render(pad("›"+name, 12)))
	default:
		b.WriteString(st.Name(seat.Name).Render(pad(name, 12)))
	}
	up := "-"
	if seat.Running() {
		up = age(now, seat.Started)
	}
	pid := "-"
	if seat.PID > 0 {
		pid = fmt.Sprint(seat.PID)
	}
	b.WriteString(" " + style.Render(pad(process, 11)) + fmt.Sprintf(" %4s %7s ", up, pid))
	meshState := cmp.Or(seat.Mesh, "offline")
	note := seat.disagreement()
	switch {
	case note != "":
		b.WriteString(st.Stalled.Render(pad("≠ "+meshState, 10)))
	case meshState == "offline":
		b.WriteString(st.Offline.Render(pad(meshState, 10)))
	default:
		b.WriteString(pad(meshState, 10))
	}
	b.WriteString(st.Dim.Render(fmt.Sprintf(" %4s %4s", age(now, seat.MeshSince), age(now, seat.LastOutput))))
	if note != "" {
		b.WriteString(" " + st.Stalled.Render(note))
	}
	if held {
		b.WriteString(" " + st.Waiting.Render("held: "+heldWhy))
	}
	if _, ok := seat.unsandboxed(); ok {
		b.WriteString(" " + st.Waiting.Render("unsandboxed"))
	}
	if len(seat.Attached) > 0 {
		b.WriteString(" " + st.Working.Render("⧉ "+holders(seat.Attached)))
	}
	b.WriteString(s.usageTags(seat))
	switch {
	case !seat.Lost.IsZero():
		b.WriteString(" " + st.Crashed.Render("lost "+age(now, seat.Lost)+" ago"))
	case seat.Running() && !seat.Reattached.IsZero():
		b.WriteString(" " + st.Dim.Render("reattached "+age(now, seat.Reattached)))
	case seat.Running() && !seat.Resumed.IsZero():
		b.WriteString(" " + st.Dim.Render("resumed "+age(now, seat.Resumed)))
	}
	return b.String()
}

// holders names who is attached, by actor, a count after those attached
// more than once: "root×2, alice".
func holders(ids []string) string {
	var order []string
	count := map[string]int{}
	for _, id := range ids {
		name := id
		if _, actor, ok := strings.Cut(id, "."); ok {
			name = actor
		}
		name = wire.CleanLabel(name)
		if count[name] == 0 {
			order = append(order, name)
		}
		count[name]++
	}
	for i, n := range order {
		if count[n] > 1 {
			order[i] = fmt.Sprintf("%s×%d", n, count[n])
		}
	}
	return strings.Join(order, ", ")
}

// preview is the last lines of the shown seat's screen.
func (s *seatsView) preview(w int) string {
	st := &s.sh.styles
	sel, ok := s.shown, s.showing
	if !ok {
		return block([]string{st.Dim.Render("SCREEN"), st.Dim.Render("select a seat to see its screen")}, w, s.h)
	}
	name := wire.CleanLabel(sel.Name)
	var warn []string // the detail line of a seat that could read the space's keys
	if why, ok := sel.unsandboxed(); ok {
		warn = []string{st.Waiting.Render(oneLine("unsandboxed: " + why))}
	}
	if !sel.Lost.IsZero() {
		warn = append(warn, st.Crashed.Render(oneLine("lost "+sel.Lost.Local().Format("15:04:05")+": "+sel.LostWhy)))
	}
	if !sel.Resumed.IsZero() && sel.Lost.IsZero() {
		from := "its harness kept no session: it started afresh under the same identity"
		if sel.ResumedFrom != "" {
			from = "from session " + sel.ResumedFrom
		}
		warn = append(warn, st.Dim.Render(oneLine("resumed "+sel.Resumed.Local().Format("15:04:05")+" "+from)))
	}
	shot := s.shot
	if shot == nil || shot.Name != sel.Name || shot.Manager != sel.Manager {
		return block(append([]string{st.Title.Render("SCREEN · " + name)}, append(warn, st.Dim.Render("fetching the screen…"))...), w, s.h)
	}
	head := "SCREEN · " + name
	if !shot.Screen.Running && shot.Err == "" {
		head += " · exited, last screen"
	}
	lines := append([]string{st.Title.Render(head)}, warn...)
	if shot.Err != "" {
		return block(append(lines, st.Error.Render(oneLine(shot.Err))), w, s.h)
	}
	body := screenLines(shot.Screen.Text)
	if room := s.h - len(lines); len(body) > room {
		body = body[len(body)-room:]
	}
	return block(append(lines, body...), w, s.h)
}

// screenLines is a screen's text as printable lines, trailing blanks gone.
func screenLines(text string) []string {
	raw := strings.Split(ansi.Strip(text), "\n")
	out := make([]string, 0, len(raw))
	for _, l := range raw {
		l = strings.Map(func(r rune) rune {
			switch {
			case r == '\t':
				return ' '
			case unicode.IsControl(r):
				return -1
			}
			return r
		}, l)
		out = append(out, strings.TrimRight(l, " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// joinColumns sets blocks of equal height side by side, line by line.
func joinColumns(blocks ...string) string {
	cols := make([][]string, len(blocks))
	n := 0
	for i, b := range blocks {
		cols[i] = strings.Split(b, "\n")
		n = max(n, len(cols[i]))
	}
	var b strings.Builder
	for row := range n {
		if row > 0 {
			b.WriteByte('\n')
		}
		for _, c := range cols {
			if row < len(c) {
				b.WriteString(c[row])
			}
		}
	}
	return b.String()
}

func (s *seatsView) ShortHelp() []key.Binding {
	k := s.sh.keys
	return []key.Binding{k.Spawn, k.Stop, k.Type}
}

func (s *seatsView) FullHelp() [][]key.Binding { return [][]key.Binding{s.ShortHelp()} }

// glyphDeclared marks a seat the space's manifest declares.
const glyphDeclared = "◆"

// undeclaredMissing are the declared seats no manager runs, sorted.
func (s *seatsView) undeclaredMissing() []string {
	var out []string
	for n := range s.declared {
		if !slices.ContainsFunc(s.all, func(seat Seat) bool { return seat.Name == n && seat.Running() }) {
			out = append(out, wire.CleanLabel(n))
		}
	}
	slices.Sort(out)
	return out
}
