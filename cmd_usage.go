package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/seat/client"
)

// usageNote says, for ps, what a seat has cost and done, as its harness's
// transcript says it.
func usageNote(note func(string, ...any), r client.CensusRow) {
	u := r.Usage
	if u == nil {
		return
	}
	parts := []string{fmt.Sprintf("%s in, %s out tokens", tokens(u.InputTokens+u.CacheWriteTokens), tokens(u.OutputTokens))}
	if u.CacheReadTokens > 0 {
		parts[0] += fmt.Sprintf(" (%s read from cache)", tokens(u.CacheReadTokens))
	}
	if u.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", u.CostUSD))
	}
	parts = append(parts, render.Plural(u.ToolCalls, "tool call"), render.Plural(u.Turns, "turn"))
	if u.LastAnswerMs != 0 {
		parts = append(parts, "last answer "+ageMs(r.ManagerNowMs, u.LastAnswerMs)+" ago")
	}
	line := r.Name + ": " + strings.Join(parts, ", ")
	switch {
	case u.OverBudget:
		line += fmt.Sprintf("; OVER its budget of %s tokens", tokens(u.Budget))
	case u.Budget > 0:
		line += fmt.Sprintf("; budget %s tokens", tokens(u.Budget))
	}
	if u.Error != "" {
		line += "; its transcript did not read: " + u.Error
	}
	note("%s", line)
}

// tokens is a token count for a person: 950, 12.3k, 4.1M.
func tokens(n int64) string {
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

// statusJSON is status --json: the report, and each seat's cost and
// activity where its harness says them.
func statusJSON(g *globals, r host.Status) any {
	out := struct {
		host.Status
		Usage []seatUsage `json:"usage"`
	}{r, []seatUsage{}}
	if !r.Up || !r.Reachable {
		return out
	}
	cl, nc, err := g.managers()
	if err != nil {
		return out
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cs, err := cl.Census(ctx, "")
	if err != nil {
		return out
	}
	for _, row := range cs.Rows {
		if row.Usage != nil {
			out.Usage = append(out.Usage, seatUsage{Name: row.Name, Manager: row.Manager, Usage: row.Usage})
		}
	}
	return out
}
