package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// versionInfo is `cotal version --json`.
type versionInfo struct {
	Version    string `json:"version"`
	NATSServer string `json:"natsServer"`
	Go         string `json:"go"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

func newVersionCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print cotal's version and its broker's",
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			v := versionInfo{Version: version, NATSServer: "unknown", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, d := range bi.Deps {
					if d.Path == "github.com/nats-io/nats-server/v2" {
						v.NATSServer = d.Version
					}
				}
			}
			if asJSON {
				printJSON(g.stdout, v)
				return
			}
			fmt.Fprintf(g.stdout, "cotal %s (nats-server %s, %s %s/%s)\n", v.Version, v.NATSServer, v.Go, v.OS, v.Arch)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
