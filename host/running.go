package host

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cotal-go/cotal/config"
)

// RunningMeshes lists the meshes of the spaces data remembers that run
// now (a process holds the store lock), sorted by space, each with the
// folder its broker.json says it serves ("" while that file does not
// describe the running mesh).
func RunningMeshes(data string) ([]config.LiveMesh, error) {
	spaces, err := config.KnownSpaces(data)
	if err != nil {
		return nil, err
	}
	var out []config.LiveMesh
	for _, p := range spaces {
		s, err := Probe(p)
		if err != nil || !s.Running {
			continue
		}
		m := config.LiveMesh{Space: p.Space, PID: s.PID}
		if rec, err := s.Serving(); err == nil {
			m.Folder = rec.Folder
		}
		out = append(out, m)
	}
	return out, nil
}

// NotRunning is ErrNotRunning for the space p, saying why that space was
// looked for (res) and naming the meshes that do run among those data
// remembers: first those serving this folder, then the others with the
// folder each serves.
func NotRunning(data string, p config.Paths, res config.Resolution) error {
	why := ""
	switch res.Source {
	case config.FromFlag:
		why = "; --space (or COTAL_SPACE) names it"
	case config.FromCreds:
		why = "; the credential in " + res.Detail + " names it"
	case config.FromUse:
		why = "; `cotal use` chose it"
	case config.FromProject:
		why = "; it is named after the project folder " + res.Detail
	}
	live, _ := RunningMeshes(data)
	mine := config.ServingFolder(live, res.Folder)
	var here, elsewhere []string
	for _, m := range live {
		switch {
		case m.Space == p.Space:
		case slices.Contains(mine, m):
			here = append(here, m.Space)
		default:
			elsewhere = append(elsewhere, m.Space)
			if m.Folder != "" {
				elsewhere[len(elsewhere)-1] += " (serving " + m.Folder + ")"
			}
		}
	}
	running := ""
	switch {
	case len(here) > 0:
		running = fmt.Sprintf("; running for this folder: %s; --space NAME uses one", strings.Join(here, ", "))
	case len(elsewhere) > 0:
		running = fmt.Sprintf("; running elsewhere: %s; --space NAME uses one", strings.Join(elsewhere, ", "))
	}
	return fmt.Errorf("%w for space %s (start it with `cotal up --detach --space %s`, or pass --server)%s%s", ErrNotRunning, p.Space, p.Space, why, running)
}
