package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// Feed limits.
const (
	feedCap    = 500             // entries kept; the oldest go first
	foldWindow = 2 * time.Second // identical posts closer than this fold into one line
	foldLook   = 8               // how many recent entries a post may fold into
)

// allTab is the feed tab that shows every channel.
const allTab = "all"

// feedEntry is a post, or a burst of identical ones folded into one line.
type feedEntry struct {
	Post
	count int
	last  time.Time
}

// feedView is the channel feed, newest at the bottom, with channel tabs.
// scroll counts entries from the bottom; 0 follows new posts.
type feedView struct {
	sh      *shared
	entries []feedEntry
	ids     map[string]struct{} // ids of the entries kept, for history/live dedup
	tabs    []string
	tab     int
	scroll  int
	focused bool
	w, h    int
}

func newFeedView(sh *shared) *feedView {
	return &feedView{sh: sh, ids: map[string]struct{}{}, tabs: []string{allTab}}
}

func (f *feedView) SetSize(w, h int) { f.w, f.h = w, h }

// addTab makes a channel selectable before anything is posted on it.
func (f *feedView) addTab(ch string) {
	if ch == "" || slices.Contains(f.tabs, ch) {
		return
	}
	cur := f.tabs[f.tab]
	f.tabs = append(f.tabs, ch)
	slices.Sort(f.tabs[1:])
	f.tab = slices.Index(f.tabs, cur)
}

// currentChannel is the selected channel tab, "" on the all tab.
func (f *feedView) currentChannel() string {
	if f.tab == 0 {
		return ""
	}
	return f.tabs[f.tab]
}

// add appends posts, dropping ones already shown and folding bursts.
func (f *feedView) add(posts []Post) {
	for _, p := range posts {
		if p.ID != "" {
			if _, dup := f.ids[p.ID]; dup {
				continue
			}
		}
		if p.Kind == "channel" {
			f.addTab(p.Channel)
		}
		if f.fold(p) {
			continue
		}
		if len(f.entries) >= feedCap {
			drop := len(f.entries) - feedCap + 1
			for _, e := range f.entries[:drop] {
				delete(f.ids, e.ID)
			}
			f.entries = slices.Delete(f.entries, 0, drop)
		}
		f.entries = append(f.entries, feedEntry{Post: p, count: 1, last: p.At})
		if p.ID != "" {
			f.ids[p.ID] = struct{}{}
		}
		if f.scroll > 0 && f.matches(&f.entries[len(f.entries)-1]) {
			f.scroll++ // keep the lines a person scrolled to in place
		}
	}
}

// fold counts p into a recent identical entry; it reports whether it did.
func (f *feedView) fold(p Post) bool {
	for i := len(f.entries) - 1; i >= 0 && i >= len(f.entries)-foldLook; i-- {
		e := &f.entries[i]
		if e.Channel == p.Channel && e.FromID == p.FromID && e.Text == p.Text && e.Kind == p.Kind &&
			p.At.Sub(e.last) <= foldWindow && p.At.Sub(e.last) >= -foldWindow {
			e.count++
			if p.At.After(e.last) {
				e.last = p.At
			}
			return true
		}
	}
	return false
}

func (f *feedView) matches(e *feedEntry) bool {
	ch := f.currentChannel()
	if q := f.sh.filter; q != "" && !matchAny(q, e.From, e.To, e.Channel, e.Kind, e.Text) {
		return false
	}
	return ch == "" || (e.Kind == "channel" && e.Channel == ch)
}

// switchTab moves to the previous (-1) or next (+1) channel tab.
func (f *feedView) switchTab(d int) {
	f.tab = (f.tab + d + len(f.tabs)) % len(f.tabs)
	f.scroll = 0
}

// move handles a navigation key; it reports whether it used it.
func (f *feedView) move(msg tea.KeyMsg) bool {
	k := f.sh.keys
	page := max(f.h-3, 1)
	switch {
	case key.Matches(msg, k.Up):
		f.scroll++
	case key.Matches(msg, k.Down):
		f.scroll--
	case key.Matches(msg, k.PageUp):
		f.scroll += page
	case key.Matches(msg, k.PageDown):
		f.scroll -= page
	case key.Matches(msg, k.Top):
		f.scroll = len(f.entries)
	case key.Matches(msg, k.Bottom):
		f.scroll = 0
	case key.Matches(msg, k.PrevTab):
		f.switchTab(-1)
	case key.Matches(msg, k.NextTab):
		f.switchTab(1)
	default:
		return false
	}
	n := 0
	for i := range f.entries {
		if f.matches(&f.entries[i]) {
			n++
		}
	}
	f.scroll = max(min(f.scroll, n-1), 0)
	return true
}

func (f *feedView) tabLine() string {
	st := &f.sh.styles
	parts := make([]string, len(f.tabs))
	for i, t := range f.tabs {
		label := t
		if i > 0 {
			label = "#" + t
		}
		if i == f.tab {
			parts[i] = st.TabOn.Render(label)
		} else {
			parts[i] = st.Tab.Render(label)
		}
	}
	title := st.Title
	if !f.focused {
		title = st.Dim
	}
	return title.Render("FEED") + "  " + strings.Join(parts, st.Rule.Render(" │ "))
}

func (f *feedView) View() string {
	st := &f.sh.styles
	room := f.h - 1
	lines := make([]string, 0, f.h)
	lines = append(lines, f.tabLine())
	var picked []*feedEntry
	skip := f.scroll
	for i := len(f.entries) - 1; i >= 0 && len(picked) < room; i-- {
		e := &f.entries[i]
		if !f.matches(e) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		picked = append(picked, e)
	}
	if len(picked) == 0 {
		msg := "no posts yet"
		if ch := f.currentChannel(); ch != "" {
			msg = "no posts on #" + ch + " yet"
		}
		lines = append(lines, st.Dim.Render(msg))
		return block(lines, f.w, f.h)
	}
	// Newest at the bottom: pad above so the last post sits on the last row.
	for range room - len(picked) {
		lines = append(lines, "")
	}
	if f.scroll > 0 && len(picked) == room {
		picked[len(picked)-1] = nil // a marker row at the top
	}
	for i := len(picked) - 1; i >= 0; i-- {
		if picked[i] == nil {
			lines = append(lines, st.Dim.Render(fmt.Sprintf("↑ scrolled %d back · G to follow", f.scroll)))
			continue
		}
		line := f.line(picked[i])
		if f.focused {
			// The bottom line is the one o or enter opens in full.
			gutter := " "
			if i == 0 {
				gutter = st.Cursor.Render("›")
			}
			line = gutter + line
		}
		lines = append(lines, line)
	}
	return block(lines, f.w, f.h)
}

// selected is the post o or enter opens: the bottom one shown.
func (f *feedView) selected() (*feedEntry, bool) {
	skip := f.scroll
	for i := len(f.entries) - 1; i >= 0; i-- {
		e := &f.entries[i]
		if !f.matches(e) {
			continue
		}
		if skip == 0 {
			return e, true
		}
		skip--
	}
	return nil, false
}

// full is a post in full for a pager of width w: where and when, who,
// and its whole text, wrapped.
func (f *feedView) full(e *feedEntry, w int) []string {
	st := &f.sh.styles
	where := "#" + e.Channel
	switch e.Kind {
	case "dm":
		where = "direct message"
		if e.To != "" {
			where += " to " + e.To
		}
	case "anycast":
		where = "task for " + e.Channel
	}
	from := e.From
	if e.FromID != "" {
		from += " (" + e.FromID + ")"
	}
	head := fmt.Sprintf("%s · from %s · %s (%s ago)", where, from, e.At.Local().Format("2006-01-02 15:04:05"), age(f.sh.now, e.At))
	out := []string{st.Dim.Render(oneLine(head))}
	if e.count > 1 {
		out = append(out, st.Dim.Render(fmt.Sprintf("sent %d times within %s", e.count, foldWindow)))
	}
	if e.Historical {
		out = append(out, st.Dim.Render("from the history read at start"))
	}
	return append(append(out, ""), wrap(e.Text, w, 0)...)
}

func (f *feedView) line(e *feedEntry) string {
	st := &f.sh.styles
	var b strings.Builder
	b.WriteString(st.Dim.Render(e.At.Local().Format("15:04:05")) + " ")
	switch {
	case e.Kind == "dm":
		b.WriteString(st.Waiting.Render("DM") + " ")
	case e.Kind == "anycast":
		b.WriteString(st.Waiting.Render(e.Channel) + " ")
	case f.tab == 0:
		b.WriteString(st.Receipt.Render("#"+e.Channel) + " ")
	}
	b.WriteString(st.Name(e.From).Render(e.From))
	if e.To != "" {
		b.WriteString(" → " + st.Name(e.To).Render(e.To))
	}
	b.WriteString(": ")
	text := oneLine(e.Text)
	if e.Historical {
		text = st.Dim.Render(text)
	}
	b.WriteString(text)
	if e.count > 1 {
		b.WriteString(st.Key.Render(fmt.Sprintf(" ×%d", e.count)))
	}
	return b.String()
}

func (f *feedView) ShortHelp() []key.Binding {
	return []key.Binding{f.sh.keys.PrevTab, f.sh.keys.NextTab, f.sh.keys.PageUp, f.sh.keys.Bottom}
}

func (f *feedView) FullHelp() [][]key.Binding { return [][]key.Binding{f.ShortHelp()} }
