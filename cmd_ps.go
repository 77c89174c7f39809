package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
)

func newPsCmd(g *globals) *cobra.Command {
	var on string
	var wide, asJSON bool
	cmd := &cobra.Command{
		Use:   "ps",
		Short: "List the seats of every manager, process state and mesh state side by side",
		Long: `Ask every registered manager for its seats at once. Each row shows the
process state and the mesh state with their ages; they can disagree (a process
running but off the mesh, or gone). Managers that do not answer are named, and
the command then exits 1: the census is incomplete.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cl, nc, err := g.managers()
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := ctxTimeout()
			defer cancel()
			cs, err := cl.Census(ctx, on)
			if err != nil {
				return clirun.Refused(err)
			}
			if asJSON {
				printJSON(g.stdout, cs)
			} else {
				clirender.Census(g.stdout, g.stderr, cs, wide, worktreeNote, usageNote)
			}
			if cs.Incomplete() {
				return exitError{exitFail}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "ask only this manager instance")
	cmd.Flags().BoolVar(&wide, "wide", false, "also show ids, lifecycle uids and goals")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
