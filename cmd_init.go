package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/manifest"
	"github.com/cotal-go/cotal/mesh/wire"
)

// initReport is `cotal init --json`: each file and whether it was written
// (false: it existed and was kept).
type initReport struct {
	Manifest        string `json:"manifest"`
	ManifestCreated bool   `json:"manifestCreated"`
	Persona         string `json:"persona"`
	PersonaCreated  bool   `json:"personaCreated"`
	Space           string `json:"space"`
}

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
			r := initReport{Space: space, Manifest: filepath.Join(dir, manifest.FileName),
				Persona: filepath.Join(config.AgentsDir(dir), manifest.StarterPersona+".md")}
			if err := os.MkdirAll(config.AgentsDir(dir), 0o755); err != nil {
				return fmt.Errorf("creating %s: %w", config.AgentsDir(dir), err)
			}
			var err error
			if r.ManifestCreated, err = writeNew(r.Manifest, manifest.Starter(space)); err != nil {
				return err
			}
			if r.PersonaCreated, err = writeNew(r.Persona, manifest.StarterPersonaFile); err != nil {
				return err
			}
			if asJSON {
				return g.resultJSON(r)
			}
			for _, f := range []struct {
				path    string
				created bool
			}{{r.Manifest, r.ManifestCreated}, {r.Persona, r.PersonaCreated}} {
				if f.created {
					fmt.Fprintf(g.stdout, "created %s\n", f.path)
				} else {
					fmt.Fprintf(g.stdout, "kept %s (it exists)\n", f.path)
				}
			}
			fmt.Fprintln(g.stdout, "next: edit cotal.yaml, `cotal plan` to see what it does, `cotal up -f cotal.yaml` to start it")
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the folder (default: here)")
	cmd.Flags().StringVar(&space, "space", "", "the space the file describes (default: the folder's name)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// writeNew writes body to path unless a file is there; it says whether it
// wrote.
func writeNew(path, body string) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := f.WriteString(body); err != nil {
		f.Close()
		return false, err
	}
	return true, f.Close()
}
