package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print cotal's version and its broker's",
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			nats := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, d := range bi.Deps {
					if d.Path == "github.com/nats-io/nats-server/v2" {
						nats = d.Version
					}
				}
			}
			fmt.Fprintf(g.stdout, "cotal %s (nats-server %s, %s %s/%s)\n", version, nats, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	}
}
