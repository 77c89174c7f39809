package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/manifest"
	"github.com/cotal-go/cotal/mesh/wire"
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
			if dir == "" {
				cwd, err := os.Getwd()
				if err != nil {
					return err
				}
				dir = cwd
			}
			if space == "" {
				space = manifest.SpaceFor(filepath.Base(dir))
			} else if err := wire.ValidSpace(space); err != nil {
				return usage(err)
			}
			r, err := manifest.WriteStarter(dir, space)
			if err != nil {
				return err
			}
			if asJSON {
				return g.resultJSON(r)
			}
			clirender.Written(g.stdout, []string{r.Manifest, r.Persona}, []bool{r.ManifestCreated, r.PersonaCreated},
				"next: edit cotal.yaml, `cotal plan` to see what it does, `cotal up -f cotal.yaml` to start it")
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the folder (default: here)")
	cmd.Flags().StringVar(&space, "space", "", "the space the file describes (default: the folder's name)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
