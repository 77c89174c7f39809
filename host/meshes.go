package host

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/cotal-go/cotal/config"
)

// Mesh is one known space as `cotal meshes` lists it.
type Mesh struct {
	Space    string    `json:"space"`
	State    string    `json:"state"` // running, unreachable, starting, stopped, crashed (pid gone), never started
	URL      string    `json:"url,omitempty"`
	PID      int       `json:"pid,omitempty"`
	Mode     string    `json:"mode,omitempty"`
	Started  time.Time `json:"started,omitzero"`
	StoreDir string    `json:"storeDir"`
	Folder   string    `json:"folder,omitempty"` // the folder the mesh serves, as its last run recorded
	Default  bool      `json:"default"`          // the `cotal use` default
}

// DescribeMesh says how the space at p stands: whether its store lock is
// held, and whether what holds it answers; def is the `cotal use` default.
func DescribeMesh(p config.Paths, def string) Mesh {
	r := Mesh{Space: p.Space, StoreDir: p.StoreDir, Default: p.Space == def, State: "never started"}
	s, err := Probe(p)
	if err != nil {
		r.State = "unknown (" + err.Error() + ")"
		return r
	}
	var re *RecordError
	switch _, err := s.Serving(); {
	case errors.As(err, &re):
		r.PID = s.PID
		r.State = "running, broker.json damaged"
		if re.Starting {
			r.State = "starting"
		}
		return r
	case s.RecordErr != nil:
		return r // nothing runs and nothing says it ever did
	}
	rec := s.Record
	r.URL, r.PID, r.Mode, r.Started, r.Folder = rec.URL, rec.PID, rec.Mode, rec.Started, rec.Folder
	switch {
	case s.Running && !reachable(rec.URL):
		r.State = "unreachable"
	case s.Running:
		r.State = "running"
	case !rec.Stopped.IsZero():
		r.State = "stopped"
	default:
		r.State = "crashed (pid gone)"
	}
	return r
}

// reachable reports whether something accepts TCP connections at a nats
// URL, or at any of a comma-separated list (a mesh on a cluster).
func reachable(raw string) bool {
	for _, one := range strings.Split(raw, ",") {
		u, err := url.Parse(strings.TrimSpace(one))
		if err != nil {
			continue
		}
		c, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			continue
		}
		c.Close()
		return true
	}
	return false
}
