// Package quit is the one place cotal catches the signals that ask it to
// stop: a context that ends at the first one a command takes.
package quit

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// Signals ask cotal to stop: Ctrl-C, SIGTERM (what `cotal down`
// sends), a closed terminal.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// Until is the one place cotal catches quit signals (a terminal's
// window changes are seat/attach/tty's). The context it returns
// ends at the first quit signal accept takes (nil takes every one), with a
// Signal as its cause; a signal accept declines is dropped and the
// command goes on. Only commands that run until stopped call it: every
// other one keeps the default, so Ctrl-C ends it at once. Once the context
// has ended, signals have their default effect again.
func Until(parent context.Context, accept func(os.Signal) bool) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, Signals...)
	go func() {
		defer signal.Stop(sigs)
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-sigs:
				if accept == nil || accept(s) {
					cancel(Signal{s})
					return
				}
			}
		}
	}()
	return ctx, func() { cancel(nil) }
}

// UntilOrHangup is Until for a screen in front of a mesh hosted
// in this process: a SIGHUP that hangup takes (true: the mesh outlives its
// terminal) ends the context like any quit signal, but leaves the process
// catching SIGINT and SIGTERM and ignoring SIGHUP; headless then waits
// until quit takes one of them. Those are caught before the first loop
// lets go of the signals, so none is missed.
func UntilOrHangup(parent context.Context, hangup func() bool) (ctx context.Context, stop context.CancelFunc, headless func(quit func(os.Signal) bool)) {
	after := make(chan os.Signal, 1)
	var hung atomic.Bool
	ctx, stop = Until(parent, func(s os.Signal) bool {
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

// Signal is why an Until context ended: the signal it took.
type Signal struct{ os.Signal }

func (q Signal) Error() string { return "stopped by " + q.Signal.String() }
