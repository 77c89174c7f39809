package launch

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/manifest"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat/client"
)

// Caller is the command a launch function works for: the space it acts
// on, who it acts as, how it reaches the mesh, and where it prints. main
// makes it from its global flags; each function resolves the space first
// (a manifest's, when -f names one) and then leaves it alone.
type Caller struct {
	Space string // --space, "" for none
	// Resolve resolves the space (space, when not "", in place of
	// --space: a manifest's) to cotal's data dir and the space's paths.
	Resolve func(space string) (data string, p config.Paths, res config.Resolution, err error)
	data    string       // set by resolved
	paths   config.Paths // set by resolved
	Creds   string       // --creds, checked: a file path or ""
	Server  string       // --server

	In       io.Reader
	Out, Err io.Writer
	Terminal bool // a person at a terminal on both ends

	// Managers is a client of the space's managers; closing the
	// connection ends it.
	Managers func() (*client.Client, *nats.Conn, error)
	// Endpoint connects to the mesh as --creds or the local operator.
	Endpoint func(context.Context, mesh.Options) (*mesh.Endpoint, error)
	// Control is a control-surface client as --creds or the operator.
	Control func() (*ep.Client, *nats.Conn, error)
	// Target finds the running mesh the command talks to.
	Target func() (host.Target, error)
	// Quit is the quit rule of a command hosting h: whether a quit
	// signal stops it, saying why not when it does not.
	Quit func(h *host.Host) func(os.Signal) bool
}

// resolved is c with its space resolved: space, when not "", is a
// manifest's, in place of --space.
func (c Caller) resolved(space string) (Caller, config.Resolution, error) {
	var res config.Resolution
	var err error
	c.data, c.paths, res, err = c.Resolve(space)
	return c, res, err
}

// withManifest loads the manifest file names (LoadManifest) and resolves
// c to its space.
func (c Caller) withManifest(file string) (Caller, *manifest.Manifest, error) {
	m, err := LoadManifest(file, c.Space)
	if err != nil {
		return c, nil, err
	}
	c, _, err = c.resolved(m.Space)
	return c, m, err
}

// Terminal reports whether a person is at a terminal on both ends: out
// and this process's standard input.
func Terminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	return ok && term.IsTerminal(f.Fd()) && term.IsTerminal(os.Stdin.Fd())
}

// ErrReported ends a command whose failure it already said in full: the
// command exits 1 and prints nothing more.
var ErrReported = errors.New("the failure was reported")

// callTimeout bounds a one-shot call to the managers.
const callTimeout = 10 * time.Second
