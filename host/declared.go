package host

import (
	"fmt"

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
		if r.Kind == config.KindEndpoint {
			// Its rights are a credential's, for a program that connects
			// itself: no seat runs with them.
			return nil, fmt.Errorf("%s is an endpoint of the space's manifest (a credential for a program that connects itself), not a persona a seat runs", name)
		}
		return r.AgentFile(), nil
	}
}
