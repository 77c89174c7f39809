package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/launch"
)

func newInitCmd(g *globals) *cobra.Command {
	var dir, space string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented starter cotal.yaml and one persona for this folder",
		Long: `Write cotal.yaml, a mesh described in one file (which agents, which channels,
who may read and post where), with every key explained in comments, and the
persona it names, .cotal/agents/lead.md. A file that exists is kept, never
overwritten. Then edit it, see what it would do with "cotal plan", and start it
with "cotal up -f cotal.yaml".`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			r, err := launch.Init(dir, space)
			switch {
			case err != nil:
				return err
			case asJSON:
				return g.resultJSON(r)
			}
			clirender.Init(g.stdout, r)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the folder (default: here)")
	cmd.Flags().StringVar(&space, "space", "", "the space the file describes (default: the folder's name)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
