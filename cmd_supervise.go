package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/launch"
	"github.com/cotal-go/cotal/seat/attach"
)

func newSuperviseCmd(g *globals) *cobra.Command {
	o := &launch.SuperviseOptions{}
	cmd := &cobra.Command{
		Use:   "supervise",
		Short: "Run an extra manager instance in this process, serving a running mesh",
		Long: `Serve the manager endpoint from this process too: a space may have several
managers, each with its own seats; ps asks them all. The instance id is kept
in --id-file so a restart is the same instance at a new epoch. Ctrl-C with live
seats asks for a second Ctrl-C before stopping them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return launch.Supervise(cmd.Context(), g.launcher(), *o) },
	}
	cmd.Flags().StringVar(&o.IDFile, "id-file", "", "where this instance keeps its id (default the store's supervise.id)")
	cmd.Flags().StringVar(&o.Project, "project", "", "the project whose .cotal/agents personas it spawns (default: the nearest to here)")
	cmd.Flags().DurationVar(&o.Readiness, "readiness", 0, launch.ReadinessHelp)
	cmd.Flags().IntVar(&o.MaxSessions, "max-sessions", attach.DefaultMaxSessions, "the most attach sessions this manager serves at once")
	return cmd
}
