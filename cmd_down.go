package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

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
			// The store lock says whether the mesh runs, never broker.json.
			s, err := host.Probe(p)
			if err != nil {
				return err
			}
			res := downJSON{Space: p.Space, SeatsStopped: []string{}}
			done := func(format string, args ...any) error {
				if asJSON {
					return g.resultJSON(res)
				}
				fmt.Fprintf(g.stdout, format, args...)
				return nil
			}
			if !s.Running {
				return done("mesh %s is not running\n", p.Space)
			}
			// Seats run in the mesh's ptys: stopping the mesh stops them.
			// Never by surprise: bare down refuses while any is live. A
			// mesh already on its way out is only waited for.
			_, serr := s.Serving()
			var stopping *host.RecordError
			if errors.As(serr, &stopping) && stopping.Stopping {
				fmt.Fprintf(g.stderr, "mesh %s (pid %d) is already stopping; waiting for it to end\n", p.Space, s.PID)
			} else if withAgents {
				// Every manager's seats, those of supervise processes too:
				// the mesh's own stop would take only its own.
				stopped, err := stopEverySeat(g)
				var re *host.RecordError
				switch {
				case errors.As(err, &re) && !re.Starting:
					// Its managers cannot be reached; the mesh still stops
					// its own seats as it stops.
					fmt.Fprintf(g.stderr, "cotal: %v\ncannot ask its managers for their seats: stopping the mesh stops its own; seats of supervise processes keep running\n", re)
				case err != nil:
					return fmt.Errorf("stopping the seats: %w; the mesh is still running", err)
				case len(stopped) > 0:
					res.SeatsStopped = stopped
					if !asJSON {
						fmt.Fprintf(g.stdout, "stopped %d seat(s): %s\n", len(stopped), strings.Join(stopped, ", "))
					}
				}
			} else if !keepSeats {
				live, err := runningSeats(g)
				if err != nil {
					return fmt.Errorf("cannot tell whether seats are live (%v); `cotal down --with-agents` stops the mesh and any seats", err)
				}
				if len(live) > 0 {
					fmt.Fprintf(g.stderr, "cotal: %d seat(s) still running: %s\nstop them with `cotal stop <name>`, stop everything with `cotal down --with-agents`, or leave them running for the next up with `cotal down --keep-seats`\n", len(live), strings.Join(live, ", "))
					return exitError{exitFail}
				}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			stop := host.Stop
			if keepSeats {
				if kept, err := runningSeats(g); err == nil {
					res.SeatsKept = kept
				}
				stop = host.StopKeepingSeats
			}
			pid, err := stop(ctx, p, func(pid int) {
				fmt.Fprintf(g.stderr, "waiting for mesh %s (pid %d) to stop...\n", p.Space, pid)
			})
			switch {
			case errors.Is(err, host.ErrNotRunning):
				return done("mesh %s is not running\n", p.Space) // it stopped meanwhile
			case errors.Is(err, context.DeadlineExceeded):
				return fmt.Errorf("mesh %s (pid %d) still running after %s; see %s", p.Space, pid, timeout, p.LogFile())
			case err != nil:
				return err
			}
			res.Stopped, res.PID = true, pid
			if len(res.SeatsKept) > 0 {
				return done("mesh %s stopped (pid %d); %d seat(s) run on in their keepers for the next up: %s\n", p.Space, pid, len(res.SeatsKept), strings.Join(res.SeatsKept, ", "))
			}
			return done("mesh %s stopped (pid %d)\n", p.Space, pid)
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

// downJSON is `cotal down --json`: Stopped is false when the mesh was not
// running.
type downJSON struct {
	Space        string   `json:"space"`
	Stopped      bool     `json:"stopped"`
	PID          int      `json:"pid,omitempty"`
	SeatsStopped []string `json:"seatsStopped"`
	SeatsKept    []string `json:"seatsKept,omitempty"` // left running in their keepers (--keep-seats)
}

// runningSeats asks every manager which seats still run (nil when none
// answers: a mesh without managers).
func runningSeats(g *globals) ([]string, error) {
	cl, nc, err := g.managers()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := ctxTimeout()
	defer cancel()
	rows, err := cl.Running(ctx)
	if err != nil {
		return nil, err
	}
	var live []string
	for _, r := range rows {
		live = append(live, r.Name)
	}
	return live, nil
}
