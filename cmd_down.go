package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/launch"
)

func newDownCmd(g *globals) *cobra.Command {
	o := &launch.DownOptions{}
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the space's background mesh and wait until it is gone",
		Long: `Stop the space's background mesh and wait until it is gone. Bare down
refuses while any seat is live and names them; --with-agents stops them too;
--keep-seats stops the mesh and leaves the seats running in their keepers (each
seat's process is held by a keeper process of its own), for the next up to take
back as they are. With -f FILE it stops only what "cotal up -f FILE" started:
the file's seats, its endpoints' credentials, and the mesh when up -f started
it and nothing else runs on it. With --preserve-state it stops the seats
without ending them and writes a resume inventory: the next up restarts
every seat under the same identity, its harness resuming its own session
(up --fresh discards the inventory instead).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return reported(launch.Down(cmd.Context(), g.launcher(), *o))
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&o.Timeout, "timeout", 30*time.Second, "how long to wait for the mesh to stop")
	fl.BoolVar(&o.JSON, "json", false, "print the outcome as JSON")
	fl.BoolVar(&o.WithAgents, "with-agents", false, "also stop the seats it runs (bare down refuses while any is live)")
	fl.BoolVar(&o.KeepSeats, "keep-seats", false, "leave the seats running in their keepers; the next up takes them back")
	fl.BoolVar(&o.Preserve, "preserve-state", false, "stop the seats and the mesh for the night: the next up resumes every seat as it was (same identity, inbox and memberships; the harness's own session)")
	fl.StringVarP(&o.File, "file", "f", "", "stop only what up -f started from the `manifest` (a cotal.yaml, or a folder holding one), and the mesh if it started it and nothing else runs")
	return cmd
}
