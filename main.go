// Command cotal runs a Cotal mesh for AI coding agents on one workstation:
// an embedded NATS broker with JetStream, per-agent credentials, and the
// CLI that talks to it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/seat/sandbox"
)

func main() {
	// Started as a seat's launcher, this process confines itself and
	// becomes the seat's agent; nothing below runs.
	sandbox.Main()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// quitSignals ask cotal to stop: Ctrl-C, SIGTERM (what `cotal down`
// sends), a closed terminal.
var quitSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// untilQuit is the one place cotal catches quit signals (a terminal's
// window changes are seat/attach/tty's). The context it returns
// ends at the first quit signal accept takes (nil takes every one), with a
// quitSignal as its cause; a signal accept declines is dropped and the
// command goes on. Only commands that run until stopped call it: every
// other one keeps the default, so Ctrl-C ends it at once. Once the context
// has ended, signals have their default effect again.
func untilQuit(parent context.Context, accept func(os.Signal) bool) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, quitSignals...)
	go func() {
		defer signal.Stop(sigs)
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-sigs:
				if accept == nil || accept(s) {
					cancel(quitSignal{s})
					return
				}
			}
		}
	}()
	return ctx, func() { cancel(nil) }
}

// untilQuitOrHangup is untilQuit for a screen in front of a mesh hosted
// in this process: a SIGHUP that hangup takes (true: the mesh outlives its
// terminal) ends the context like any quit signal, but leaves the process
// catching SIGINT and SIGTERM and ignoring SIGHUP; headless then waits
// until quit takes one of them. Those are caught before the first loop
// lets go of the signals, so none is missed.
func untilQuitOrHangup(parent context.Context, hangup func() bool) (ctx context.Context, stop context.CancelFunc, headless func(quit func(os.Signal) bool)) {
	after := make(chan os.Signal, 1)
	var hung atomic.Bool
	ctx, stop = untilQuit(parent, func(s os.Signal) bool {
		if s == syscall.SIGHUP && hangup() {
			signal.Notify(after, os.Interrupt, syscall.SIGTERM)
			signal.Ignore(syscall.SIGHUP)
			hung.Store(true)
		}
		return true
	})
	return ctx, stop, func(quit func(os.Signal) bool) {
		if !hung.Load() {
			return
		}
		defer signal.Stop(after)
		for s := range after {
			if quit(s) {
				return
			}
		}
	}
}

// quitSignal is why an untilQuit context ended: the signal it took.
type quitSignal struct{ os.Signal }

func (q quitSignal) Error() string { return "stopped by " + q.Signal.String() }

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
