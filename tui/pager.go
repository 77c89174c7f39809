package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// pager is an overlay over the body of the screen that the person
// scrolls: every key, the message log, a feed post in full. Its lines are
// built for the width, again on a resize.
type pager struct {
	sh    *shared
	title string
	build func(w int) []string
	lines []string
	top   int // the first line shown
	w, h  int
}

func newPager(sh *shared) *pager { return &pager{sh: sh} }

// open shows what build makes, from its top, or from its end when end is
// set (a log: the newest is last).
func (p *pager) open(title string, build func(w int) []string, end bool) {
	p.title, p.build, p.top = title, build, 0
	p.lines = build(p.w)
	if end {
		p.top = len(p.lines)
	}
	p.clamp()
}

func (p *pager) SetSize(w, h int) {
	p.w, p.h = w, h
	if p.build != nil {
		p.lines = p.build(w)
	}
	p.clamp()
}

// room is the lines left under the title and above the footer.
func (p *pager) room() int { return max(p.h-2, 1) }

func (p *pager) clamp() { p.top = max(min(p.top, len(p.lines)-p.room()), 0) }

// move scrolls on a navigation key; it reports whether it used it.
func (p *pager) move(msg tea.KeyMsg) bool {
	k := p.sh.keys
	switch {
	case key.Matches(msg, k.Up):
		p.top--
	case key.Matches(msg, k.Down):
		p.top++
	case key.Matches(msg, k.PageUp):
		p.top -= p.room()
	case key.Matches(msg, k.PageDown):
		p.top += p.room()
	case key.Matches(msg, k.Top):
		p.top = 0
	case key.Matches(msg, k.Bottom):
		p.top = len(p.lines)
	default:
		return false
	}
	p.clamp()
	return true
}

func (p *pager) View() string {
	st := &p.sh.styles
	out := []string{st.Title.Render(p.title) + st.Dim.Render("  ↑/↓ pgup/pgdn scroll · any other key closes")}
	end := min(p.top+p.room(), len(p.lines))
	out = append(out, p.lines[p.top:end]...)
	above, below := p.top, len(p.lines)-end
	if above > 0 || below > 0 {
		for len(out) < p.h-1 {
			out = append(out, "")
		}
		out = append(out, st.Dim.Render(moreLine(above, below)))
	}
	return block(out, p.w, p.h)
}

// moreLine says how many rows a list does not show: "+3 more ↓".
func moreLine(above, below int) string {
	switch {
	case above > 0 && below > 0:
		return fmt.Sprintf("+%d more (↑%d ↓%d)", above+below, above, below)
	case above > 0:
		return fmt.Sprintf("+%d more ↑", above)
	}
	return fmt.Sprintf("+%d more ↓", below)
}

// wrap breaks text into lines of at most w cells, each of its own lines
// apart, the lines a long one breaks into indented by indent cells.
func wrap(text string, w, indent int) []string {
	width := max(w-indent, 1)
	var out []string
	for _, para := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		para = strings.ReplaceAll(para, "\t", "    ")
		for i, line := range strings.Split(ansi.Wrap(para, width, ""), "\n") {
			if i > 0 {
				line = strings.Repeat(" ", indent) + line
			}
			out = append(out, line)
		}
	}
	return out
}
