package main

import (
	"errors"
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
// bad input before anything connects.
func checkCreds(g *globals) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if g.creds == "" || !takesCreds(cmd) {
			return nil
		}
		_, err := loadCreds(g.creds, credsSource(cmd))
		return err
	}
}
