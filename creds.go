package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/mesh/wire"
)

// loadCreds reads and checks a creds file a person named (source says
// how: "--creds", "COTAL_CREDS="): one that cannot be used is bad input.
func loadCreds(path, source string) (wire.CredsInfo, error) {
	info, err := config.LoadCreds(path)
	return info, cliargs.NamedCreds(err, source)
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
		path, err := cliargs.MintedCreds(g.creds, g.credslessPaths)
		if err != nil {
			return err
		}
		g.creds = path
		_, err = loadCreds(g.creds, credsSource(cmd))
		return err
	}
}

// credslessPaths are the space's paths, resolved as if no --creds named
// the space.
func (g *globals) credslessPaths() (config.Paths, error) {
	creds := g.creds
	g.creds = ""
	defer func() { g.creds = creds }()
	_, p, _, err := g.paths()
	return p, err
}

// actsAsAgent reports whether --creds names an agent's (or an observer's)
// credential rather than the operator's.
func (g *globals) actsAsAgent() bool {
	if g.creds == "" {
		return false
	}
	info, err := config.LoadCreds(g.creds)
	return err == nil && info.Profile.Mediated()
}
