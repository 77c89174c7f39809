package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

// loadCreds reads and checks a creds file a person named (source says
// how: "--creds", "COTAL_CREDS="): one that cannot be used is bad input.
func loadCreds(path, source string) (wire.CredsInfo, error) {
	info, err := config.LoadCreds(path)
	var ce *config.CredsError
	if errors.As(err, &ce) {
		named := source + " " + path
		if strings.HasSuffix(source, "=") {
			named = source + path
		}
		return info, usagef("%s: %s", named, ce.Problem)
	}
	return info, err
}

// credsSource says how the creds of cmd were named.
func credsSource(cmd *cobra.Command) string {
	if f := cmd.Flag("creds"); f != nil && f.Changed {
		return "--creds"
	}
	return "COTAL_CREDS="
}

// credsFree are the commands that never act as an identity, so a stale
// COTAL_CREDS does not stop them.
var credsFree = map[string]bool{"version": true, "completion": true, "help": true, "meshes": true, "use": true, "setup": true, "up": true}

// takesCreds reports whether cmd acts as the identity in --creds.
func takesCreds(cmd *cobra.Command) bool {
	top := cmd
	for top.HasParent() && top.Parent().HasParent() {
		top = top.Parent()
	}
	if !top.HasParent() {
		return true // bare cotal: the dashboard acts as the identity
	}
	name := top.Name()
	return !credsFree[name] && name != cobra.ShellCompRequestCmd && name != cobra.ShellCompNoDescRequestCmd
}

// checkCreds is every command's first step: creds that cannot be used are
// bad input before anything connects. A bare name that is no file here
// names the credential `cotal mint <name>` kept under the store.
func checkCreds(g *globals) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if g.creds == "" || !takesCreds(cmd) {
			return nil
		}
		if err := g.mintedCreds(); err != nil {
			return err
		}
		_, err := loadCreds(g.creds, credsSource(cmd))
		return err
	}
}

// mintedCreds turns --creds <name> into the path of the credential mint
// wrote for name under the space's store, when no file of that name is
// here: creds kept under the store are out of every seat's sight, and
// this is how a person names them.
func (g *globals) mintedCreds() error {
	name := g.creds
	if !wire.ValidToken(name) {
		return nil
	}
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	g.creds = ""
	_, p, _, err := g.paths()
	g.creds = name
	if err != nil {
		return err
	}
	path := filepath.Join(p.CredsDir(), name+".creds")
	if _, err := os.Stat(path); err != nil {
		return usagef("--creds %s: no such file here, and space %s has no credential minted for %s (`cotal mint %s` writes one)", name, p.Space, name, name)
	}
	g.creds = path
	return nil
}

// actsAsAgent reports whether --creds names an agent's (or an observer's)
// credential rather than the operator's.
func (g *globals) actsAsAgent() bool {
	if g.creds == "" {
		return false
	}
	info, err := loadCreds(g.creds, "creds")
	return err == nil && info.Profile.Mediated()
}
