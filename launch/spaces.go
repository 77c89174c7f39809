package launch

import (
	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/cliargs"
)

// Meshes is `cotal meshes`: every space cotal knows, how each stands, and
// the `cotal use` default.
func Meshes() ([]host.Mesh, string, error) {
	data, err := config.DataDir()
	if err != nil {
		return nil, "", err
	}
	spaces, err := config.KnownSpaces(data)
	if err != nil {
		return nil, "", err
	}
	def, _ := config.DefaultSpaceChoice(data)
	rows := make([]host.Mesh, 0, len(spaces))
	for _, p := range spaces {
		rows = append(rows, host.DescribeMesh(p, def))
	}
	return rows, def, nil
}

// Use is `cotal use [space]`: the default set to the space args name,
// when they name one, then the default and the space commands run here
// use, with why.
func Use(c Caller, args []string) (clirender.UseJSON, error) {
	data, err := config.DataDir()
	if err != nil {
		return clirender.UseJSON{}, err
	}
	u := clirender.UseJSON{}
	if len(args) == 1 {
		if err := config.SetDefaultSpace(data, args[0]); err != nil {
			return u, cliargs.UsageError{Err: err}
		}
		u.Set = args[0]
	}
	if u.Default, err = config.DefaultSpaceChoice(data); err != nil {
		return u, err
	}
	_, res, err := c.resolved("")
	u.Space, u.Source = res.Space, res.Source
	return u, err
}
