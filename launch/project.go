package launch

import (
	"os"
	"path/filepath"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/manifest"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
)

// here is dir, or the working directory when dir is "".
func here(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return os.Getwd()
}

// Setup is `cotal setup`: dir (default here) made a cotal project, its
// default persona seeded unless it exists, and the personas it holds.
func Setup(dir string) (clirender.SetupJSON, error) {
	dir, err := here(dir)
	if err != nil {
		return clirender.SetupJSON{}, err
	}
	path, created, err := config.SeedProject(dir)
	if err != nil {
		return clirender.SetupJSON{}, err
	}
	return clirender.SetupJSON{AgentsDir: config.AgentsDir(dir), Persona: path, Created: created, Personas: clirender.NonNil(seat.ListPersonas(dir))}, nil
}

// Init is `cotal init`: the starter manifest and its persona written into
// dir (default here) for space (default the folder's name), keeping what
// exists.
func Init(dir, space string) (manifest.Started, error) {
	dir, err := here(dir)
	if err != nil {
		return manifest.Started{}, err
	}
	if space == "" {
		space = manifest.SpaceFor(filepath.Base(dir))
	} else if err := wire.ValidSpace(space); err != nil {
		return manifest.Started{}, cliargs.UsageError{Err: err}
	}
	return manifest.WriteStarter(dir, space)
}
