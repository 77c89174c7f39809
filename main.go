// Command cotal runs a Cotal mesh for AI coding agents on one workstation:
// an embedded NATS broker with JetStream, per-agent credentials, and the
// CLI that talks to it.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
