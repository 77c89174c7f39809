package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/launch"
)

func newSetupCmd(g *globals) *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Make this folder a cotal project: seed .cotal/agents/default.md",
		Long: `Make the folder a cotal project: create .cotal/agents/ and a default persona
(a Claude Code seat with the spawn capability that joins no channel at boot
but may join, read and post on any). Nothing that exists is overwritten; a
later run says what is there.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			r, err := launch.Setup(dir)
			switch {
			case err != nil:
				return err
			case asJSON:
				return g.resultJSON(r)
			}
			clirender.Setup(g.stdout, r)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the project folder (default: here)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
