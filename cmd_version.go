package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func newVersionCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print cotal's version and its broker's",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { clirender.Version(g.stdout, clirun.Version(version), asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
