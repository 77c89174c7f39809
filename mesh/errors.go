package mesh

import "github.com/cotal-go/cotal/mesh/wire"

// refuse builds a person-readable error that errors.Is matches to kind.
var refuse = wire.Refuse
