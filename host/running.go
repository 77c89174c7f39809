package host

import "github.com/cotal-go/cotal/config"

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
