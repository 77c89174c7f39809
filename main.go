// Command cotal runs a Cotal mesh for AI coding agents on one workstation:
// an embedded NATS broker with JetStream, per-agent credentials, and the
// CLI that talks to it.
package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/quit"
	"github.com/cotal-go/cotal/seat/sandbox"
)

func main() {
	// Started as a seat's launcher, this process confines itself and
	// becomes the seat's agent; nothing below runs.
	sandbox.Main()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// untilQuit is where a command that runs until stopped catches quit
// signals (internal/quit); those that host a mesh catch them in launch.
var untilQuit = quit.Until

// hostQuit is what a hosting command's untilQuit accepts: the host's quit
// rule, a SIGTERM forcing it, each refusal naming the live seats.
func hostQuit(g *globals, h *host.Host) func(os.Signal) bool {
	return func(s os.Signal) bool {
		live, ok := h.AskQuit(s == syscall.SIGTERM)
		if !ok {
			fmt.Fprintf(g.stderr, "\n%d seat(s) still running: %s\nstopping now stops them; press Ctrl-C again within %d s to stop them and quit\n",
				len(live), strings.Join(live, ", "), int(host.QuitWindow.Seconds()))
		}
		return ok
	}
}
