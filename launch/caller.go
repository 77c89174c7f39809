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
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat/client"
)

// Caller is the command a launch function works for: the space it
// resolved, who it acts as, how it reaches the mesh, and where it prints.
// main makes it from its global flags.
type Caller struct {
	Data     string // cotal's data dir
	Paths    config.Paths
	Creds    string // --creds, checked: a file path or ""
	Server   string // --server
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
