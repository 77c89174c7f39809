package main

import (
	"fmt"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
)

func newDownCmd(g *globals) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the space's background mesh and wait until it is gone",
		Args:  cobra.NoArgs,
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
	return cmd
}
