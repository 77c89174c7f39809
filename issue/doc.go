// Package issue hands out a space's credentials and takes them back: it
// mints identities from the space's authority and keeps the registry of
// what it minted (one record per lifecycle), so a name is never handed out
// twice, minting a name again revokes its earlier credentials, and the
// next mesh start provisions what was minted while none ran. It also holds
// the seat minter a manager uses. It works with or without a running mesh
// (a connection to it is optional everywhere) and never starts one: it must
// not import host, tui or package main.
package issue

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

// OperatorPrincipal is the local user's principal: owner local, actor the
// login name made into a token.
func OperatorPrincipal() wire.Principal {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	actor := strings.ReplaceAll(wire.SanitizeToken(name), "-", "_")
	if len(actor) > 64 {
		actor = actor[:64]
	}
	return wire.Principal{Owner: "local", Actor: actor}
}

// MintedDir holds one registry file per minted identity; a mesh start
// provisions each of them.
func MintedDir(p config.Paths) string { return filepath.Join(p.AuthDir(), "minted") }
