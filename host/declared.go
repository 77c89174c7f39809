package host

import (
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/manifest"
	"github.com/cotal-go/cotal/seat"
)

// declared is the manager's source of the personas the space's manifest
// declares: what `up -f` recorded under the store's auth folder, read at
// each spawn, so a file applied to the running mesh takes effect at once.
func declared(p config.Paths) seat.Declared {
	return func(name string) (*config.AgentFile, error) {
		r, err := manifest.Declared(p, name)
		if r == nil || err != nil {
			return nil, err
		}
		return r.AgentFile(), nil
	}
}
