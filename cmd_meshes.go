package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/launch"
)

func newMeshesCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "meshes",
		Short: "List every known space, running or not",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			rows, def, err := launch.Meshes()
			switch {
			case err != nil:
				return err
			case asJSON:
				return g.resultJSON(rows)
			}
			clirender.Meshes(g.stdout, rows, def)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}

func newUseCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "use [space]",
		Short: "Set (or show) the default space for commands run without --space",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			u, err := launch.Use(g.launcher(), args)
			switch {
			case err != nil:
				return err
			case asJSON:
				return g.resultJSON(u)
			}
			clirender.Use(g.stdout, u)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
