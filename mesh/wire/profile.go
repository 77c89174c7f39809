package wire

import "fmt"

// Profile is the kind of principal a credential is minted for, and so
// what it may read and post: the one set every part decides read rights
// by.
type Profile string

// The profiles. A credential is minted as agent, observer or operator;
// open is what every connection to a mesh without authentication is.
const (
	// ProfileAgent may post only as itself within allowPublish, read only
	// within allowSubscribe, and bind only its own pre-created durables;
	// it reads storage through the delivery service.
	ProfileAgent Profile = "agent"
	// ProfileObserver reads chat, presence and the channel registry; no
	// DMs, no posting.
	ProfileObserver Profile = "observer"
	// ProfileOperator is the local user's CLI: everything in the space's
	// account. The threat model trusts the operator.
	ProfileOperator Profile = "operator"
	// ProfileOpen is a connection to an open mesh: no lists at all.
	ProfileOpen Profile = "open"
)

// ParseProfile accepts a profile a credential may be minted with, as
// typed on the command line.
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(s); p {
	case ProfileAgent, ProfileObserver, ProfileOperator:
		return p, nil
	}
	return "", fmt.Errorf("unknown profile %q: use agent, observer or operator", s)
}

// ReadsStorage reports whether a connection of this profile reads the
// space's streams itself (the operator, or anyone on an open mesh); an
// agent or observer reads them through the delivery service.
func (p Profile) ReadsStorage() bool { return p == ProfileOperator || p == ProfileOpen }

// Mediated reports whether a connection of this profile holds no
// JetStream rights, so reaches storage only through the delivery service.
func (p Profile) Mediated() bool { return p == ProfileAgent || p == ProfileObserver }
