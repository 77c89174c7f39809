package clirun

import (
	"runtime"
	"runtime/debug"
)

// VersionInfo is cotal's version and its broker's.
type VersionInfo struct {
	Version    string `json:"version"`
	NATSServer string `json:"natsServer"`
	Go         string `json:"go"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

// Version is this binary's VersionInfo, version being cotal's own; the
// broker's comes from the build's module list.
func Version(version string) VersionInfo {
	v := VersionInfo{Version: version, NATSServer: "unknown", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/nats-io/nats-server/v2" {
				v.NATSServer = d.Version
			}
		}
	}
	return v
}
