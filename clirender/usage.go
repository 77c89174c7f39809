package clirender

import (
	"fmt"
	"strings"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/seat/client"
)

// UsageNote says, for ps, what a seat has cost and done, as its harness's
// transcript says it.
func UsageNote(note func(string, ...any), r client.CensusRow) {
	u := r.Usage
	if u == nil {
		return
	}
	parts := []string{fmt.Sprintf("%s in, %s out tokens", Tokens(u.InputTokens+u.CacheWriteTokens), Tokens(u.OutputTokens))}
	if u.CacheReadTokens > 0 {
		parts[0] += fmt.Sprintf(" (%s read from cache)", Tokens(u.CacheReadTokens))
	}
	if u.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", u.CostUSD))
	}
	parts = append(parts, render.Plural(u.ToolCalls, "tool call"), render.Plural(u.Turns, "turn"))
	if u.LastAnswerMs != 0 {
		parts = append(parts, "last answer "+AgeMs(r.ManagerNowMs, u.LastAnswerMs)+" ago")
	}
	line := r.Name + ": " + strings.Join(parts, ", ")
	switch {
	case u.OverBudget:
		line += fmt.Sprintf("; OVER its budget of %s tokens", Tokens(u.Budget))
	case u.Budget > 0:
		line += fmt.Sprintf("; budget %s tokens", Tokens(u.Budget))
	}
	if u.Error != "" {
		line += "; its transcript did not read: " + u.Error
	}
	note("%s", line)
}

// Tokens is a token count for a person: 950, 12.3k, 4.1M.
func Tokens(n int64) string {
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

// seatUsage is one seat's usage in status --json.
type seatUsage struct {
	Name    string           `json:"name"`
	Manager string           `json:"manager"`
	Usage   *client.UsageRow `json:"usage"`
}

// StatusJSON is what status --json prints: the report, and the cost and
// activity of each seat of rows whose harness says them.
func StatusJSON(r host.Status, rows []client.CensusRow) any {
	out := struct {
		host.Status
		Usage []seatUsage `json:"usage"`
	}{r, []seatUsage{}}
	for _, row := range rows {
		if row.Usage != nil {
			out.Usage = append(out.Usage, seatUsage{Name: row.Name, Manager: row.Manager, Usage: row.Usage})
		}
	}
	return out
}
