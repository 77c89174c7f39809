package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

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
			m, err := loadManifest(g, file)
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
			tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "WHO\tAGENT\tREAD (FILE)\tREAD (MESH)\tPOST (FILE)\tPOST (MESH)\tSTATE")
			side := func(r *manifest.Rights) (string, string) {
				if r == nil {
					return "-", "-"
				}
				return manifest.List(r.Read), manifest.List(r.Post)
			}
			for _, r := range rows {
				fr, fp := side(r.File)
				mr, mp := side(r.Mesh)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Who, dash(r.Agent), fr, mr, fp, mp, r.State)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the manifest (default: cotal.yaml here or in the nearest folder above)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
