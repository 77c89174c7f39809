// Command cotal runs a Cotal mesh for AI coding agents on one workstation:
// an embedded NATS broker with JetStream, per-agent credentials, and the
// CLI that talks to it.
package main

import (
	"os"

	"github.com/cotal-go/cotal/seat/sandbox"
)

func main() {
	// Started as a seat's launcher, this process confines itself and
	// becomes the seat's agent; nothing below runs.
	sandbox.Main()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
