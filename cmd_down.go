package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/host"
)

func newDownCmd(g *globals) *cobra.Command {
	var timeout time.Duration
	var withAgents, keepSeats, preserve, asJSON bool
	var file string
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the space's background mesh and wait until it is gone",
		Long: `Stop the space's background mesh and wait until it is gone. Bare down
refuses while any seat is live and names them; --with-agents stops them too;
--keep-seats stops the mesh and leaves the seats running in their keepers (each
seat's process is held by a keeper process of its own), for the next up to take
back as they are. With -f FILE it stops only what "cotal up -f FILE" started:
the file's seats, its endpoints' credentials, and the mesh when up -f started
it and nothing else runs on it. With --preserve-state it stops the seats
without ending them and writes a resume inventory: the next up restarts
every seat under the same identity, its harness resuming its own session
(up --fresh discards the inventory instead).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if withAgents && keepSeats {
				return usagef("--with-agents stops the seats and --keep-seats keeps them: pick one")
			}
			if preserve {
				return runDownPreserve(cmd.Context(), g, withAgents || keepSeats || file != "", timeout, asJSON)
			}
			if file != "" {
				return runDownFile(cmd.Context(), g, file, timeout, asJSON)
			}
			_, p, _, err := g.paths()
			if err != nil {
				return err
			}
			d, err := host.Down(cmd.Context(), p, host.DownOptions{WithAgents: withAgents, KeepSeats: keepSeats, Timeout: timeout, Managers: g.managers,
				Note: func(format string, a ...any) { fmt.Fprintf(g.stderr, format, a...) },
				Seats: func(stopped []string) {
					if !asJSON {
						fmt.Fprintf(g.stdout, "stopped %d seat(s): %s\n", len(stopped), strings.Join(stopped, ", "))
					}
				}})
			var live *host.LiveSeatsError
			if errors.As(err, &live) {
				fmt.Fprintf(g.stderr, "cotal: %d seat(s) still running: %s\nstop them with `cotal stop <name>`, stop everything with `cotal down --with-agents`, or leave them running for the next up with `cotal down --keep-seats`\n", len(live.Live), strings.Join(live.Live, ", "))
				return exitError{exitFail}
			}
			if err != nil {
				return err
			}
			res := downJSON{Space: p.Space, Stopped: d.Stopped, PID: d.PID, SeatsStopped: clirender.NonNil(d.SeatsStopped), SeatsKept: d.SeatsKept}
			switch {
			case asJSON:
				return g.resultJSON(res)
			case !d.Stopped:
				fmt.Fprintf(g.stdout, "mesh %s is not running\n", p.Space)
			case len(d.SeatsKept) > 0:
				fmt.Fprintf(g.stdout, "mesh %s stopped (pid %d); %d seat(s) run on in their keepers for the next up: %s\n", p.Space, d.PID, len(d.SeatsKept), strings.Join(d.SeatsKept, ", "))
			default:
				fmt.Fprintf(g.stdout, "mesh %s stopped (pid %d)\n", p.Space, d.PID)
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the mesh to stop")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outcome as JSON")
	cmd.Flags().BoolVar(&withAgents, "with-agents", false, "also stop the seats it runs (bare down refuses while any is live)")
	cmd.Flags().BoolVar(&keepSeats, "keep-seats", false, "leave the seats running in their keepers; the next up takes them back")
	cmd.Flags().BoolVar(&preserve, "preserve-state", false, "stop the seats and the mesh for the night: the next up resumes every seat as it was (same identity, inbox and memberships; the harness's own session)")
	cmd.Flags().StringVarP(&file, "file", "f", "", "stop only what `cotal up -f FILE` started from this manifest (and the mesh, if it started it and nothing else runs)")
	return cmd
}

// downJSON is `cotal down --json`: Stopped is false when the mesh was not
// running.
type downJSON struct {
	Space        string   `json:"space"`
	Stopped      bool     `json:"stopped"`
	PID          int      `json:"pid,omitempty"`
	SeatsStopped []string `json:"seatsStopped"`
	SeatsKept    []string `json:"seatsKept,omitempty"` // left running in their keepers (--keep-seats)
}
