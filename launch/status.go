package launch

import (
	"context"
	"time"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/seat/client"
)

// Status is `cotal status`: how the space's mesh stands, its managers
// asked all at once.
func Status(c Caller) (host.Status, error) {
	c, _, err := c.resolved("")
	if err != nil {
		return host.Status{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), clirun.Timeout)
	defer cancel()
	return host.ReportStatus(ctx, host.StatusQuery{Paths: c.paths, Server: c.Server, Creds: c.Creds, Trust: c.TLS,
		Managers: func(ctx context.Context) ([]client.ManagerStatus, error) {
			cl, nc, err := c.Managers()
			if err != nil {
				return nil, err
			}
			defer nc.Close()
			ms, _, err := cl.Managers(ctx)
			return ms, err
		}}), nil
}

// StatusJSON is `cotal status --json`: the report r, and each seat's cost
// and activity where its harness says them (none when the mesh is down or
// no census answers within 5 s).
func StatusJSON(c Caller, r host.Status) any {
	var rows []client.CensusRow
	if !r.Up || !r.Reachable {
		return clirender.StatusJSON(r, rows)
	}
	if cl, nc, err := c.Managers(); err == nil {
		defer nc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if cs, err := cl.Census(ctx, ""); err == nil {
			rows = cs.Rows
		}
	}
	return clirender.StatusJSON(r, rows)
}
