package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/seat"
)

// defaultPersona is what `cotal setup` seeds: a Claude Code seat that may
// spawn others. It joins no channel at boot, and may join, read and post
// on any channel when it chooses to; every key an agent file may set is
// listed in comments.
var defaultPersona = `---
name: default
agent: claude
description: A general coding agent on the mesh.
capabilities: [spawn, run]
subscribe: []
allowSubscribe: [">"]
allowPublish: [">"]
` + personaKeyComments() + `---
You are a coding agent on a cotal mesh. Other agents and people can reach you
with direct messages, channel posts and tasks for your role; use the cotal
command (cotal inbox, cotal send dm|msg|ask, cotal roster) to read and answer.
`

// personaKeyComments lists every persona key as YAML comments, the
// README's table in another form.
func personaKeyComments() string {
	var b strings.Builder
	b.WriteString("# Every key an agent file may set (README: Seats):\n")
	for _, k := range config.PersonaKeys {
		fmt.Fprintf(&b, "#   %-15s %-6s %s\n", k.Key, k.Type, k.Meaning)
	}
	return b.String()
}

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
			agents := config.AgentsDir(dir)
			if err := os.MkdirAll(agents, 0o755); err != nil {
				return fmt.Errorf("creating %s: %w", agents, err)
			}
			path := filepath.Join(agents, "default.md")
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			r := setupReport{AgentsDir: agents, Persona: path}
			switch {
			case errors.Is(err, fs.ErrExist):
			case err != nil:
				return err
			default:
				if _, err := f.WriteString(defaultPersona); err != nil {
					f.Close()
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
				r.Created = true
			}
			r.Personas = nonNilList(seat.ListPersonas(dir))
			if asJSON {
				printJSON(g.stdout, r)
				return nil
			}
			if r.Created {
				fmt.Fprintf(g.stdout, "created %s\n", path)
			} else {
				fmt.Fprintf(g.stdout, "kept %s (it exists)\n", path)
			}
			fmt.Fprintf(g.stdout, "personas in %s: %s\n", agents, listOrNone(r.Personas))
			fmt.Fprintln(g.stdout, "next: `cotal` (or `cotal up --detach`), then `cotal spawn default`")
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the project folder (default: here)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
