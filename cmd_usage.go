package main

import (
	"context"
	"time"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/seat/client"
)

// usageNote says, for ps, what a seat has cost and done.
var usageNote = clirender.UsageNote

// statusJSON is status --json: the report, and each seat's cost and
// activity where its harness says them (none when no census answers).
func statusJSON(g *globals, r host.Status) any {
	var rows []client.CensusRow
	if !r.Up || !r.Reachable {
		return clirender.StatusJSON(r, rows)
	}
	if cl, nc, err := g.managers(); err == nil {
		defer nc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if cs, err := cl.Census(ctx, ""); err == nil {
			rows = cs.Rows
		}
	}
	return clirender.StatusJSON(r, rows)
}
