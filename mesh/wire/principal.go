package wire

import "strings"

// Principal is the (owner, actor) pair a peer is known by on the wire; the connection nkey is not it.
type Principal struct {
	Owner string
	Actor string
}

// ID is the dot-form used in from.id, presence keys and subject sender tokens.
func (p Principal) ID() string { return p.Owner + "." + p.Actor }

// Dash is the dash-form used where JetStream names forbid dots.
func (p Principal) Dash() string { return p.Owner + "-" + p.Actor }

// ReplyInbox is the reply-inbox prefix of one lifecycle of p (its
// connection's nats.CustomInboxPrefix): `<prefix>.>` is the only inbox its
// credential may subscribe to, so no other identity reads its replies.
func ReplyInbox(p Principal, uid string) string { return "_INBOX_" + p.Dash() + "-" + uid }

// String prints the dot-form, the way peers see the principal.
func (p Principal) String() string { return p.ID() }

// Valid refuses a principal that could not safely fill subject tokens; it names the bad part instead of rewriting it.
func (p Principal) Valid() error {
	if !ValidToken(p.Owner) {
		return refuse(ErrInvalidPrincipal, "owner %q must be one token of A-Z a-z 0-9 _ (no . * > -)", p.Owner)
	}
	if !ValidOwner(p.Owner) {
		return refuse(ErrInvalidPrincipal, "owner %q must be local or u_ followed by 26 characters of a-z 2-7", p.Owner)
	}
	if !AllBytes(p.Actor, isWordByte) {
		return refuse(ErrInvalidPrincipal, "actor %q must be one token of A-Z a-z 0-9 _ (no . * > -)", p.Actor)
	}
	if len(p.Actor) > MaxTokenLength {
		return refuse(ErrInvalidPrincipal, "actor %q is longer than %d characters", p.Actor, MaxTokenLength)
	}
	return nil
}

// ParsePrincipal reads a dot-form id such as from.id or a DM target and refuses anything but two valid tokens.
func ParsePrincipal(id string) (Principal, error) {
	owner, actor, ok := strings.Cut(id, ".")
	if !ok || strings.Contains(actor, ".") {
		return Principal{}, refuse(ErrInvalidPrincipal, "principal %q must be <owner>.<actor>", id)
	}
	p := Principal{Owner: owner, Actor: actor}
	if err := p.Valid(); err != nil {
		return Principal{}, err
	}
	return p, nil
}

// ServiceEndpoints are the control-surface endpoints the mesh itself
// serves; no principal may take one of their names.
var ServiceEndpoints = []string{DeliveryEndpoint, "manager"}

// ReservedActor says why no credential may be minted, and no seat spawned,
// under actor ("" when it is free of these rules): `cotal` and `cotal_*`
// are the mesh's own services, and the service endpoints' names would read
// as the mesh speaking. Names compare case-insensitively, as a person
// addressing a peer by name does.
func ReservedActor(actor string) string {
	low := strings.ToLower(actor)
	if low == "cotal" || strings.HasPrefix(low, "cotal_") {
		return "names cotal and cotal_* belong to the mesh's own services"
	}
	for _, s := range ServiceEndpoints {
		if low == s {
			return "it is the name of the mesh's " + s + " service"
		}
	}
	return ""
}
