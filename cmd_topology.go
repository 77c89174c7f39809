package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/manifest"
	"github.com/cotal-go/cotal/manifest/apply"
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
			m, err := g.manifest(file)
			if err != nil {
				return err
			}
			_, p, _, err := g.paths()
			if err != nil {
				return err
			}
			held, err := apply.Held(p)
			if err != nil {
				return err
			}
			rows := manifest.Topology(m, held)
			if asJSON {
				return g.resultJSON(map[string]any{"space": m.Space, "manifest": m.Path, "rows": rows})
			}
			return clirender.Topology(g.stdout, rows)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the manifest (default: cotal.yaml here or in the nearest folder above)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
