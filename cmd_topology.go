package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/launch"
)

func newTopologyCmd(g *globals) *cobra.Command {
	var file string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "topology",
		Short: "Who may read and post where: the manifest and the running mesh side by side",
		Long: `For every seat and endpoint the manifest declares (-f FILE, or the cotal.yaml
of this folder or the nearest above), print the channels the file lets it
read and post on beside those its credential on the mesh holds, and whether
they differ. The mesh's side is every agent credential the space holds
unrevoked, so agents the file does not name are listed too.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			t, err := launch.Topology(g.launcher(), file)
			switch {
			case err != nil:
				return err
			case asJSON:
				return g.resultJSON(t)
			}
			return clirender.Topology(g.stdout, t.Rows)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the manifest (default: cotal.yaml here or in the nearest folder above)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
