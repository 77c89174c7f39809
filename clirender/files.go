package clirender

import (
	"fmt"
	"io"
)

// Written says, for each file a command seeds, whether it was created or
// kept because it existed, then the lines then (what is there, what to do
// next).
func Written(w io.Writer, paths []string, created []bool, then ...string) {
	for i, path := range paths {
		if created[i] {
			fmt.Fprintf(w, "created %s\n", path)
		} else {
			fmt.Fprintf(w, "kept %s (it exists)\n", path)
		}
	}
	for _, l := range then {
		fmt.Fprintln(w, l)
	}
}

// SetupJSON is `cotal setup --json`.
type SetupJSON struct {
	AgentsDir string   `json:"agentsDir"`
	Persona   string   `json:"persona"` // the default persona's file
	Created   bool     `json:"created"` // false: it existed and was kept
	Personas  []string `json:"personas"`
}

// Setup says what `cotal setup` wrote or kept, and what to do next.
func Setup(w io.Writer, r SetupJSON) {
	Written(w, []string{r.Persona}, []bool{r.Created}, "personas in "+r.AgentsDir+": "+ListOrNone(r.Personas),
		"next: `cotal` (or `cotal up --detach`), then `cotal spawn default`")
}
