package issue

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

// ErrReservedName is returned when a name may not be minted or spawned:
// it is the operator's, the mesh's own, or another identity's.
var ErrReservedName = errors.New("name is reserved")

// CheckName refuses a principal no credential of profile may be minted
// for: the operator's name (whose record every operator command is checked
// against), the mesh's own service names, and a name an unrevoked
// credential already holds under another profile or another spelling of
// its case (names are matched case-insensitively by people). Minting the
// same principal with the same profile again is allowed: it revokes the
// earlier credentials.
func CheckName(p config.Paths, principal wire.Principal, profile wire.Profile) error {
	if profile == "" {
		profile = wire.ProfileAgent
	}
	name := principal.Actor
	if why := wire.ReservedActor(name); why != "" {
		return fmt.Errorf("%w: %q cannot be minted or spawned: %s", ErrReservedName, name, why)
	}
	if op := OperatorPrincipal(); strings.EqualFold(name, op.Actor) {
		return fmt.Errorf("%w: %q is the space's operator (the local user's CLI and dashboard); pick another name", ErrReservedName, name)
	}
	recs, err := liveMinted(p, func(r mintedRecord) bool {
		return r.Principal.Owner == principal.Owner && strings.EqualFold(r.Principal.Actor, name)
	})
	if err != nil {
		return err
	}
	for _, f := range recs {
		held := f.rec.Profile
		if held == "" {
			held = wire.ProfileAgent
		}
		switch {
		case f.rec.Principal.Actor != name:
			return fmt.Errorf("%w: %q differs only in case from %s, which holds a credential; pick another name", ErrReservedName, name, f.rec.Principal)
		case held != profile:
			return fmt.Errorf("%w: %s holds a credential as %s, not %s; retire it first or pick another name", ErrReservedName, principal, held, profile)
		}
	}
	return nil
}
