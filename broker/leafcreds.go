package broker

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Tags a link credential carries, so the leaf that holds it learns from
// the file alone which space it links, its own domain and the hub's.
const (
	tagLinkSpace = "cotal-link-space:"
	tagLinkLeaf  = "cotal-link-leaf:"
	tagLinkHub   = "cotal-link-hub:"
)

// LinkTags is what a link credential says of the link it is for.
type LinkTags struct {
	Space string // the space both sides serve
	Leaf  string // the leaf's JetStream domain
	Hub   string // the hub's JetStream domain
}

// linkPermissions are the rights of a leaf's connection into the hub's
// account, from the leaf's side: the durable sourcing of the linked
// streams both ways and nothing else. A leaf publishes the resets of its
// own consumers on the hub's origins, its replies to the hub's resets,
// its origins' deliveries to the hub and the flow-control answers of its
// sources; it receives the converse. No subject of the space, no other
// JetStream API (no consumer it could configure), no bucket.
func linkPermissions(space, leaf, hub string) jwt.Permissions {
	toHub := []string{"$JSC.R.>", "$JS.FC.>", "$JS.S.LINK." + leaf + "." + hub + ".>"}
	fromHub := []string{"$JSC.R.>", "$JS.FC.>", "$JS.S.LINK." + hub + "." + leaf + ".>"}
	for _, s := range LinkedStreams(space) {
		toHub = append(toHub, "$JS."+hub+".API.CONSUMER.RESET."+OriginStream(s)+"."+LinkConsumer(leaf))
		fromHub = append(fromHub, "$JS."+leaf+".API.CONSUMER.RESET."+OriginStream(s)+"."+LinkConsumer(hub))
	}
	return jwt.Permissions{Pub: jwt.Permission{Allow: toHub}, Sub: jwt.Permission{Allow: fromHub}}
}

// MintLink issues the credential a leaf with domain leaf dials this
// space's hub (domain hub) with: a user of the space's account that may
// connect only as a leafnode and carries only the linked streams'
// sourcing (linkPermissions). Its UserKey is what a revocation names.
// LinkPrincipal is how a revocation names the link credential of leaf:
// no principal of the mesh, so ending it ends no lifecycle.
func LinkPrincipal(leaf string) string { return linkPrincipalPrefix + leaf }

// IsLinkPrincipal reports whether a revocation's principal names a link
// credential (LinkPrincipal).
func IsLinkPrincipal(principal string) bool { return strings.HasPrefix(principal, linkPrincipalPrefix) }

const linkPrincipalPrefix = "link:"

func (a *Authority) MintLink(leaf, hub string) (Creds, error) {
	for _, d := range []string{leaf, hub} {
		if err := CheckDomain(d); err != nil {
			return Creds{}, err
		}
	}
	if leaf == hub {
		return Creds{}, fmt.Errorf("the leaf's domain %q is the hub's: every side needs its own", leaf)
	}
	ukp, err := nkeys.CreateUser()
	if err != nil {
		return Creds{}, err
	}
	uc := jwt.NewUserClaims(pub(ukp))
	uc.Name = LinkPrincipal(leaf)
	uc.IssuerAccount = a.AccountKey()
	uc.Permissions = linkPermissions(a.paths.Space, leaf, hub)
	uc.AllowedConnectionTypes.Add(jwt.ConnectionTypeLeafnode)
	uc.Tags.Add(tagLinkSpace+wire.SanitizeToken(a.paths.Space), tagLinkLeaf+leaf, tagLinkHub+hub)
	ujwt, err := uc.Encode(a.signer)
	if err != nil {
		return Creds{}, fmt.Errorf("signing the link credential for %s: %w", leaf, err)
	}
	seed, err := ukp.Seed()
	if err != nil {
		return Creds{}, err
	}
	file, err := jwt.FormatUserConfig(ujwt, seed)
	if err != nil {
		return Creds{}, err
	}
	return Creds{UserKey: pub(ukp), JWT: ujwt, Seed: seed, File: file}, nil
}

// ReadLinkCreds reads which link a creds file MintLink wrote is for,
// without verifying it (the hub does that when the leaf dials). The space
// is read as MintLink sanitized it.
func ReadLinkCreds(path string) (LinkTags, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return LinkTags{}, err
	}
	tok, err := jwt.ParseDecoratedJWT(b)
	if err != nil {
		return LinkTags{}, fmt.Errorf("%s is not a creds file: %w", path, err)
	}
	uc, err := jwt.DecodeUserClaims(tok)
	if err != nil {
		return LinkTags{}, fmt.Errorf("%s is not a creds file: %w", path, err)
	}
	var t LinkTags
	for _, tag := range uc.Tags {
		// jwt lower-cases tags; domains and the space compare as such.
		switch {
		case strings.HasPrefix(tag, tagLinkSpace):
			t.Space = strings.TrimPrefix(tag, tagLinkSpace)
		case strings.HasPrefix(tag, tagLinkLeaf):
			t.Leaf = strings.TrimPrefix(tag, tagLinkLeaf)
		case strings.HasPrefix(tag, tagLinkHub):
			t.Hub = strings.TrimPrefix(tag, tagLinkHub)
		}
	}
	if t.Leaf == "" || t.Hub == "" {
		return LinkTags{}, errors.New(path + " is not a link credential: mint one on the hub with `cotal leaf-creds NAME`")
	}
	return t, nil
}

// CheckDomain refuses a JetStream domain a link cannot name: it is one
// token of lower-case letters, digits and _ (a credential's tags keep
// only lower case).
func CheckDomain(d string) error {
	if d == "" || !wire.ValidToken(d) || d != strings.ToLower(d) {
		return fmt.Errorf("JetStream domain %q: use lower-case letters, digits and _, like lap or hub", d)
	}
	return nil
}
