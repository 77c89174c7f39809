package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
)

func newDownCmd(g *globals) *cobra.Command {
	var timeout time.Duration
	var withAgents bool
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the space's background mesh and wait until it is gone",
		Long: `Stop the space's background mesh and wait until it is gone. Seats run in
the mesh's terminals, so stopping the mesh stops them: bare down refuses while
any seat is live and names them; --with-agents stops them too.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, p, _, err := g.paths()
			if err != nil {
				return err
			}
			rec, err := config.ReadBrokerRecord(p)
			if err != nil || !rec.Stopped.IsZero() || !broker.PIDAlive(rec.PID) {
				fmt.Fprintf(g.stdout, "mesh %s is not running\n", p.Space)
				return nil
			}
			// Seats run in the mesh's ptys: stopping the mesh stops them.
			// Never by surprise: bare down refuses while any is live.
			if withAgents {
				// Every manager's seats, those of supervise processes too:
				// the mesh's own stop would take only its own.
				stopped, err := stopEverySeat(g)
				if err != nil {
					return fmt.Errorf("stopping the seats: %w; the mesh is still running", err)
				}
				if len(stopped) > 0 {
					fmt.Fprintf(g.stdout, "stopped %d seat(s): %s\n", len(stopped), strings.Join(stopped, ", "))
				}
			} else {
				live, err := liveSeats(g)
				if err != nil {
					return fmt.Errorf("cannot tell whether seats are live (%v); `cotal down --with-agents` stops the mesh and any seats", err)
				}
				if len(live) > 0 {
					fmt.Fprintf(g.stderr, "cotal: %d seat(s) still running: %s\nstop them with `cotal stop <name>`, or stop everything with `cotal down --with-agents`\n", len(live), strings.Join(live, ", "))
					return exitError{exitFail}
				}
			}
			if err := syscall.Kill(rec.PID, syscall.SIGTERM); err != nil {
				return fmt.Errorf("stopping pid %d: %w", rec.PID, err)
			}
			start := time.Now()
			said := false
			for broker.PIDAlive(rec.PID) {
				if time.Since(start) > timeout {
					return fmt.Errorf("mesh %s (pid %d) still running after %s; see %s", p.Space, rec.PID, timeout, p.LogFile())
				}
				if !said && time.Since(start) > 2*time.Second {
					said = true
					fmt.Fprintf(g.stderr, "waiting for mesh %s (pid %d) to stop...\n", p.Space, rec.PID)
				}
				time.Sleep(20 * time.Millisecond)
			}
			fmt.Fprintf(g.stdout, "mesh %s stopped (pid %d)\n", p.Space, rec.PID)
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the mesh to stop")
	cmd.Flags().BoolVar(&withAgents, "with-agents", false, "also stop the seats it runs (bare down refuses while any is live)")
	return cmd
}

// stopEverySeat stops every running seat of every manager of the space,
// gracefully, in parallel, and names them.
func stopEverySeat(g *globals) ([]string, error) {
	cl, nc, err := g.managers()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return cl.StopEverySeat(ctx)
}
