package tui

import (
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// StallAfter is how long a working seat may print nothing before the
// roster calls it stalled (strictly longer; spec PROGRESS_STALL_MS).
const StallAfter = 5 * time.Minute

// age is render.Age under the short name the dashboard's views call.
func age(now, t time.Time) string { return render.Age(now, t) }

// The shapes of the states that need a person; each has its own colour
// too, never colour alone.
const (
	glyphStalled = "⧗" // working, and silent for over StallAfter
	glyphCrashed = "!" // ended on its own with a failure
	glyphHeld    = "✎" // messages held while its person types
	glyphUnread  = "✉" // replies to the person wait unread

	glyphSuspended = "⏸" // its process is stopped by a signal
)

// glyph is a peer's status as a shape; glyphStyle gives it its colour.
func glyph(p *presence.Peer) string {
	switch {
	case p.Record.Card.Kind == presence.KindEndpoint:
		return "⚙"
	case p.Offline:
		return "⨯"
	case p.Status == presence.Working:
		return "●"
	case p.Status == presence.Waiting:
		return "◐"
	case p.Status == presence.Idle:
		return "○"
	}
	return "?"
}

func (s *Styles) glyphStyle(p *presence.Peer) lipgloss.Style {
	switch {
	case p.Offline:
		return s.Offline
	case p.Status == presence.Working:
		return s.Working
	case p.Status == presence.Waiting:
		return s.Waiting
	case p.Record.Card.Kind == presence.KindEndpoint:
		return s.Endpoint
	}
	return s.Idle
}

// statusRank orders the roster: working, waiting, idle, offline.
func statusRank(p *presence.Peer) int {
	switch {
	case p.Offline:
		return 3
	case p.Status == presence.Working:
		return 0
	case p.Status == presence.Waiting:
		return 1
	}
	return 2
}

// harnessOf reads the peer's harness from card.meta.harness or a
// "harness:<name>" tag; "" when it says none.
func harnessOf(c presence.Card) string {
	h := c.Meta["harness"]
	if h == "" {
		for _, t := range c.Tags {
			if v, ok := strings.CutPrefix(t, "harness:"); ok {
				h = v
				break
			}
		}
	}
	return strings.ToLower(strings.TrimSpace(wire.CleanLabel(h)))
}

// oneLine flattens text for a single row.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	s = strings.ReplaceAll(s, "\n", " ⏎ ")
	return strings.ReplaceAll(s, "\t", " ")
}

// fit truncates a styled line to w cells and pads it to exactly w.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	if n := w - lipgloss.Width(s); n > 0 {
		s += strings.Repeat(" ", n)
	}
	return s
}

// cut truncates plain text to w cells without padding.
func cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// pad pads plain text to w cells (truncating when longer).
func pad(s string, w int) string {
	s = cut(s, w)
	if n := w - ansi.StringWidth(s); n > 0 {
		s += strings.Repeat(" ", n)
	}
	return s
}

// block fits lines into exactly w x h cells.
func block(lines []string, w, h int) string {
	out := make([]string, h)
	for i := range h {
		if i < len(lines) {
			out[i] = fit(lines[i], w)
		} else {
			out[i] = strings.Repeat(" ", w)
		}
	}
	return strings.Join(out, "\n")
}

// msTime turns an epoch-ms field into a time, zero staying zero.
func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
