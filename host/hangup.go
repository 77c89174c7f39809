package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Hangup is the rule for the terminal a mesh is hosted under closing
// (SIGHUP): with seats live, closing a window never kills an agent's work,
// so the mesh keeps running without it until told to stop (SIGTERM at
// once, SIGINT by AskQuit's rule), and the log says so, the terminal being
// gone; true says the mesh outlives its terminal. With no seat live the
// hangup is a quit.
func (h *Host) Hangup(log io.Writer) bool {
	live := h.Live()
	if len(live) == 0 {
		return false
	}
	fmt.Fprintf(log, "%s dashboard: the terminal closed with %d seat(s) running (%s); mesh %s stays up without a dashboard: `cotal` opens one, `cotal down --with-agents` stops it\n",
		time.Now().Format(time.RFC3339), len(live), strings.Join(live, ", "), h.cfg.Paths.Space)
	return true
}

// Serve runs the host in the background until stop is called, whatever
// becomes of ctx's cancellation: a screen in front of the mesh lets go of
// it first, then stops it. stop returns Run's error.
func (h *Host) Serve(ctx context.Context) (stop func() error) {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- h.Run(runCtx) }()
	return func() error {
		cancel()
		return <-done
	}
}

// StartUnlessRunning starts the space's mesh in this process, or returns
// nil when a process already serves it (its store lock says): the caller
// is then its client.
func StartUnlessRunning(ctx context.Context, c Config) (*Host, error) {
	h, err := Start(ctx, c)
	var running *AlreadyRunningError
	if errors.As(err, &running) {
		return nil, nil
	}
	return h, err
}
