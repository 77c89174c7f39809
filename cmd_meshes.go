package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
)

func newMeshesCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "meshes",
		Short: "List every known space, running or not",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			data, err := config.DataDir()
			if err != nil {
				return err
			}
			spaces, err := config.KnownSpaces(data)
			if err != nil {
				return err
			}
			def, _ := config.DefaultSpaceChoice(data)
			rows := make([]host.Mesh, 0, len(spaces))
			for _, p := range spaces {
				rows = append(rows, host.DescribeMesh(p, def))
			}
			if asJSON {
				printJSON(g.stdout, rows)
			} else {
				clirender.Meshes(g.stdout, rows, def)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}

// useReport is `cotal use --json`: the default set with `cotal use` ("" for
// none) and the space commands run here use, with why.
type useReport struct {
	Default string `json:"default"`
	Space   string `json:"space"`
	Source  string `json:"source"`
}

func newUseCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "use [space]",
		Short: "Set (or show) the default space for commands run without --space",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			data, err := config.DataDir()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				if err := config.SetDefaultSpace(data, args[0]); err != nil {
					return usage(err)
				}
			}
			def, err := config.DefaultSpaceChoice(data)
			if err != nil {
				return err
			}
			_, _, res, err := g.paths()
			if err != nil {
				return err
			}
			switch {
			case asJSON:
				printJSON(g.stdout, useReport{Default: def, Space: res.Space, Source: res.Source})
			case len(args) == 1:
				fmt.Fprintf(g.stdout, "default space is now %s\n", args[0])
			case def == "":
				fmt.Fprintf(g.stdout, "no default set; commands here use space %s (%s)\n", res.Space, res.Source)
			default:
				fmt.Fprintf(g.stdout, "default space: %s\n", def)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func dash(s string) string { return clirender.Dash(s) }
