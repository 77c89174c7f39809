package clirun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/wire"
)

// MintRequest is a credential asked for by name, with its rights.
type MintRequest struct {
	Name, Profile, Role, Out                              string
	Subscribe, AllowSubscribe, AllowPublish, Capabilities []string
	// Given says whether the flag of that name was given: any ACL flag
	// (aclFlags) makes the flags the whole ACL and the agent file is not
	// read; an allow list not given is the default.
	Given func(flag string) bool
}

// aclFlags are the mint flags that set what an agent file would.
var aclFlags = []string{"subscribe", "allow-subscribe", "allow-publish", "role", "capability"}

// Minted is what a mint did, with the space it minted in, the agent file
// it read the ACL from ("" for none) and one it found and did not use,
// with why.
type Minted struct {
	host.Minted
	Space, AgentFile, Ignored string
}

// Mint mints a credential for the local principal r.Name from the
// space's authority (host.Mint). It needs the signing key, so --creds is
// bad input, as are a bad name or profile, an open mesh and a broken
// agent file. Ignored is set even when a later step fails.
func Mint(c Caller, r MintRequest) (Minted, error) {
	var m Minted
	if c.Creds != "" {
		return m, usagef("minting needs the space's signing key, not a credential: run `cotal mint` as the local user, without --creds (or COTAL_CREDS)")
	}
	if !wire.ValidToken(r.Name) {
		return m, usagef("name %q must be one token of A-Z a-z 0-9 _ (at most 64; no . * > - or spaces)", r.Name)
	}
	prof, err := wire.ParseProfile(r.Profile)
	if err != nil {
		return m, bad(err)
	}
	_, p, _, err := c.Paths()
	if err != nil {
		return m, err
	}
	m.Space = p.Space
	if err := host.Mintable(p); err != nil {
		return m, bad(err)
	}
	id := broker.Identity{
		Space: p.Space, Principal: wire.Principal{Owner: "local", Actor: r.Name},
		Profile: prof, Role: r.Role, Subscribe: r.Subscribe, Capabilities: r.Capabilities,
		AllowSubscribe: wire.SameAsSubscribe(r.Subscribe),
	}
	if r.Given("allow-subscribe") {
		id.AllowSubscribe = nonNil(r.AllowSubscribe)
	}
	if r.Given("allow-publish") {
		id.AllowPublish = nonNil(r.AllowPublish)
	}
	if cwd, err := os.Getwd(); err == nil {
		m.AgentFile, m.Ignored, err = issue.FromAgentFile(cwd, r.Name, slices.ContainsFunc(aclFlags, r.Given), &id)
		if errors.As(err, new(*config.AgentFileError)) {
			m.Ignored = ""
			return m, bad(err)
		}
		if err != nil {
			return m, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	m.Minted, err = host.Mint(ctx, p, id, m.AgentFile, r.Out)
	if errors.As(err, new(*host.RefusedError)) {
		return m, bad(err)
	}
	return m, err
}

// nonNil is l, or an empty list where l is nil: a list given empty is
// none, not the default.
func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// Authority is the space's authority: its operator, accounts and keys,
// made on the first call.
func Authority(c Caller) (*broker.Authority, error) {
	_, p, _, err := c.Paths()
	if err != nil {
		return nil, err
	}
	auth, err := broker.LoadAuthority(p)
	if err != nil {
		return nil, fmt.Errorf("reading the keys of space %s: %w", p.Space, err)
	}
	return auth, nil
}

// MintLink is `cotal leaf-creds <leaf>`: the credential a leaf with that
// JetStream domain dials this space's hub with, written to out.
func MintLink(c Caller, leaf, out string) (host.LinkMinted, error) {
	if c.Creds != "" {
		return host.LinkMinted{}, usagef("minting a link credential needs the space's signing key: run `cotal leaf-creds` on the hub as the local user, without --creds (or COTAL_CREDS)")
	}
	_, p, _, err := c.Paths()
	if err != nil {
		return host.LinkMinted{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	m, err := host.MintLink(ctx, p, leaf, out)
	var refused *host.RefusedError
	if errors.As(err, &refused) {
		return m, bad(err)
	}
	return m, err
}
