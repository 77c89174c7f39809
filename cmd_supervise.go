package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/seat/attach"
)

func newSuperviseCmd(g *globals) *cobra.Command {
	var idFile, project string
	var readiness time.Duration
	var maxSessions int
	cmd := &cobra.Command{
		Use:   "supervise",
		Short: "Run an extra manager instance in this process, serving a running mesh",
		Long: `Serve the manager endpoint from this process too: a space may have several
managers, each with its own seats; ps asks them all. The instance id is kept
in --id-file so a restart is the same instance at a new epoch. Ctrl-C with live
seats asks for a second Ctrl-C before stopping them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := errors.Join(checkMaxSessions(maxSessions), checkReadiness(readiness)); err != nil {
				return err
			}
			t, err := g.resolveTarget()
			if err != nil {
				return err
			}
			h, err := host.Start(cmd.Context(), host.Config{
				Paths: t.Paths, Open: t.Record.Mode == config.ModeOpen, Log: g.stderr,
				ProjectDir: project, Readiness: readiness, MaxSessions: maxSessions,
				Supervise: &host.Supervise{URL: t.URL, Creds: t.Creds, InstanceFile: idFile},
			})
			if err != nil {
				return err
			}
			ctx, stop := untilQuit(cmd.Context(), hostQuit(g, h))
			defer stop()
			mgr := h.Manager()
			fmt.Fprintf(g.stdout, "manager instance %s serving space %s at epoch %d; Ctrl-C to stop\n", mgr.InstanceID(), t.Paths.Space, mgr.Epoch())
			return h.Run(ctx)
		},
	}
	cmd.Flags().StringVar(&idFile, "id-file", "", "where this instance keeps its id (default the store's supervise.id)")
	cmd.Flags().StringVar(&project, "project", "", "the project whose .cotal/agents personas it spawns (default: the nearest to here)")
	cmd.Flags().DurationVar(&readiness, "readiness", 0, readinessHelp)
	cmd.Flags().IntVar(&maxSessions, "max-sessions", attach.DefaultMaxSessions, "the most attach sessions this manager serves at once")
	return cmd
}
