package clirender

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/cotal-go/cotal/manifest"
	"github.com/cotal-go/cotal/manifest/apply"
)

// TopologyJSON is `cotal topology --json`.
type TopologyJSON struct {
	Manifest string             `json:"manifest"`
	Rows     []manifest.TopoRow `json:"rows"`
	Space    string             `json:"space"`
}

// Topology prints `cotal topology`: each declared seat and endpoint's
// rights in the file beside those its credential holds.
func Topology(w io.Writer, rows []manifest.TopoRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Who, Dash(r.Agent), fr, mr, fp, mp, r.State)
	}
	return tw.Flush()
}

// Restarts is the seats whose launch changed, which up -f restarts only
// when asked.
func Restarts(plan *manifest.Plan) []string {
	var seats []string
	for _, s := range plan.Steps {
		if s.Action == manifest.Restart {
			seats = append(seats, s.Seats...)
		}
	}
	return seats
}

// Outcome prints what `cotal up -f` did with the manifest m: the changes,
// the creds written, what waits, the plan's notes, and a last line on errw
// when a step failed.
func Outcome(w, errw io.Writer, m *manifest.Manifest, plan *manifest.Plan, out apply.Outcome) {
	for _, s := range out.Done {
		for _, c := range s.Changes {
			fmt.Fprintf(w, "  %s: %s\n", s.Agent+s.Channel, c)
		}
	}
	for n, path := range out.Creds {
		if path != "" {
			fmt.Fprintf(w, "creds of %s: %s (0600)\n", n, path)
		}
	}
	for _, s := range out.Waiting {
		fmt.Fprintf(w, "waiting: %s\n", s.Line())
	}
	for _, n := range plan.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	switch {
	case len(out.Failed) > 0:
		fmt.Fprintf(errw, "cotal: %d step(s) failed; `cotal plan -f %s` shows what is left\n", len(out.Failed), m.Path)
	case len(out.Done) == 0 && len(out.Waiting) == 0:
		fmt.Fprintf(w, "space %s is as %s says: nothing changed\n", m.Space, m.Path)
	default:
		fmt.Fprintf(w, "space %s applied from %s\n", m.Space, m.Path)
	}
}

// YesNo reads a person's answer to a [y/N] question: yes only for y or
// yes.
func YesNo(line string) bool {
	line = strings.TrimSpace(line)
	return strings.EqualFold(line, "y") || strings.EqualFold(line, "yes")
}

// Init says what `cotal init` wrote or kept, and what to do next.
func Init(w io.Writer, r manifest.Started) {
	Written(w, []string{r.Manifest, r.Persona}, []bool{r.ManifestCreated, r.PersonaCreated},
		"next: edit cotal.yaml, `cotal plan` to see what it does, `cotal up -f cotal.yaml` to start it")
}
