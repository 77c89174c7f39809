package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/cliargs"
)

// checkCreds is every command's first step: creds that cannot be used are
// bad input before anything connects (cliargs.CheckCreds).
func checkCreds(g *globals) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error { return cliargs.CheckCreds(cmd, &g.creds, g.credslessPaths) }
}

// credslessPaths are the space's paths, resolved as if no --creds named
// the space.
func (g *globals) credslessPaths() (config.Paths, error) {
	creds := g.creds
	g.creds = ""
	defer func() { g.creds = creds }()
	_, p, _, err := g.caller().Paths()
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
