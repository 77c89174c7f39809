package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/launch"
)

func newPlanCmd(g *globals) *cobra.Command {
	var file string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Print what `cotal up -f` would do with a manifest, touching nothing",
		Long: `Read the manifest (-f FILE, or the cotal.yaml of this folder or the nearest
above), compare it with what the last "cotal up -f" applied and with what runs,
and print each step up -f would take: start the mesh, write the registry,
mint, spawn, re-mint, restart (only with --apply) or remove (only with
--prune). Nothing is started, written or stopped. A bad file is refused with
its line and column (exit 2).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan, err := launch.Plan(g.launcher(), file)
			switch {
			case err != nil:
				return err
			case asJSON:
				return g.resultJSON(plan)
			}
			fmt.Fprint(g.stdout, plan.Text())
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the manifest (default: cotal.yaml here or in the nearest folder above)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON")
	return cmd
}
