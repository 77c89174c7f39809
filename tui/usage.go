package tui

import (
	"fmt"
	"strings"
	"time"
)

// tokenCount is a token count in a row: 950, 12.3k, 4.1M.
func tokenCount(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// overBudget is the NEEDS YOU entry of a seat that spent its persona's
// budget, since its last answer (about when it crossed it).
func (s *Seat) overBudget() (laneEntry, bool) {
	u := s.Usage
	if u == nil || !u.OverBudget || !s.Running() {
		return laneEntry{}, false
	}
	spent := u.InputTokens + u.CacheWriteTokens + u.OutputTokens
	what := fmt.Sprintf("%s of %s tokens", tokenCount(spent), tokenCount(u.Budget))
	since := s.LastAnswer
	if since.IsZero() {
		since = s.Started
	}
	return laneEntry{id: "seat:" + s.key(), need: needBudget, name: s.Name, since: since, what: what}, true
}

// usageTags are what a seat's row adds of its cost and its worktree.
func (v *seatsView) usageTags(seat *Seat) string {
	st := &v.sh.styles
	var b strings.Builder
	if u := seat.Usage; u != nil {
		tag := tokenCount(u.InputTokens+u.CacheWriteTokens+u.OutputTokens) + " tok"
		if u.CostUSD > 0 {
			tag += fmt.Sprintf(" $%.2f", u.CostUSD)
		}
		if u.OverBudget {
			b.WriteString(" " + st.Stalled.Render(tag+" over budget"))
		} else {
			b.WriteString(" " + st.Dim.Render(tag))
		}
	}
	if w := seat.Worktree; w != nil && w.Kept != "" {
		b.WriteString(" " + st.Waiting.Render("worktree kept: "+w.Kept))
	}
	return b.String()
}

// answered is when a seat whose harness's transcript is read last made
// progress: its model's last answer, or, when it began working after that,
// when it began (an idle seat given work is not stalled for its idle
// hours). False for a seat whose transcript is not read, which only its
// output can tell of: a harness redraws its screen while it waits on its
// model, so output is no progress.
func (s *Seat) answered() (time.Time, bool) {
	if s.Usage == nil || !s.Running() {
		return time.Time{}, false
	}
	last := s.LastAnswer
	if s.Mesh == "working" && s.MeshSince.After(last) {
		last = s.MeshSince
	}
	if last.IsZero() {
		last = s.Started
	}
	return last, !last.IsZero()
}
