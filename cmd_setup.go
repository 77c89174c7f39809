package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/seat"
)

// setupReport is `cotal setup --json`.
type setupReport struct {
	AgentsDir string   `json:"agentsDir"`
	Persona   string   `json:"persona"` // the default persona's file
	Created   bool     `json:"created"` // false: it existed and was kept
	Personas  []string `json:"personas"`
}

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
			if dir == "" {
				cwd, err := os.Getwd()
				if err != nil {
					return err
				}
				dir = cwd
			}
			path, created, err := config.SeedProject(dir)
			if err != nil {
				return err
			}
			r := setupReport{AgentsDir: config.AgentsDir(dir), Persona: path, Created: created, Personas: clirender.NonNil(seat.ListPersonas(dir))}
			if asJSON {
				return g.resultJSON(r)
			}
			clirender.Written(g.stdout, []string{path}, []bool{r.Created}, "personas in "+r.AgentsDir+": "+clirender.ListOrNone(r.Personas),
				"next: `cotal` (or `cotal up --detach`), then `cotal spawn default`")
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the project folder (default: here)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
