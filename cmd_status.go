package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/launch"
)

func newStatusCmd(g *globals) *cobra.Command {
	var asJSON bool
	return withJSON(&cobra.Command{
		Use:   "status",
		Short: "Say whether the space's mesh is up, and how it is doing",
		Long: `Report whether the space's mesh is up: its url, auth mode, sync mode,
whether JetStream is enabled and how much of the store limit is used, and
which registered manager instances answer (asked all at once, as ps asks; a
silent one is named, with whether its registration is stale).

Exits 0 when the mesh is up and answering, 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			r, err := launch.Status(g.launcher())
			switch {
			case err != nil:
				return err
			case asJSON:
				clirender.JSON(g.stdout, launch.StatusJSON(g.launcher(), r))
			default:
				clirender.Status(g.stdout, r)
			}
			if !r.Up || !r.Reachable {
				return exitError{exitFail}
			}
			return nil
		},
	}, &asJSON, "print the report as JSON")
}
