package launch

import (
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/charmbracelet/x/term"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/manifest"
)

// Caller is the command a launch function works for: who it acts as and
// how it reaches the mesh (clirun.Caller), where it prints, and the quit
// rule of a mesh it hosts. Each launch function resolves the space first
// (a manifest's, when -f names one) and then acts on it alone.
type Caller struct {
	clirun.Caller
	In       io.Reader
	Out, Err io.Writer
	Terminal bool // a person at a terminal on both ends
	// Quit is the quit rule of a command hosting h: whether a quit
	// signal stops it, saying why not when it does not.
	Quit func(h *host.Host) func(os.Signal) bool

	data  string       // cotal's data dir, set by resolved
	paths config.Paths // the space's, set by resolved
}

// resolved is c with its space resolved: space, when not "", is a
// manifest's, in place of --space.
func (c Caller) resolved(space string) (Caller, config.Resolution, error) {
	if space != "" {
		c.Space = space
	}
	var res config.Resolution
	var err error
	c.data, c.paths, res, err = c.Paths()
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

// HostQuit is the quit rule of a command hosting h (host.AskQuit): a
// SIGTERM forces it; a quit it refuses names the live seats on errw.
func HostQuit(errw io.Writer, h *host.Host) func(os.Signal) bool {
	return func(s os.Signal) bool {
		live, ok := h.AskQuit(s == syscall.SIGTERM)
		if !ok {
			clirender.QuitRefused(errw, live, host.QuitWindow)
		}
		return ok
	}
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
