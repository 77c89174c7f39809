package launch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/cliargs"
)

// DownOptions are the flags of `cotal down`.
type DownOptions struct {
	Timeout    time.Duration
	WithAgents bool
	KeepSeats  bool
	Preserve   bool
	File       string // -f: stop only what up -f started from it
	JSON       bool
}

// Check refuses flags that contradict each other.
func (o *DownOptions) Check() error {
	if o.WithAgents && o.KeepSeats {
		return cliargs.Usagef("--with-agents stops the seats and --keep-seats keeps them: pick one")
	}
	if o.Preserve && (o.WithAgents || o.KeepSeats || o.File != "") {
		return cliargs.Usagef("--preserve-state stops the seats for the next up to resume: it goes with none of --with-agents, --keep-seats, -f")
	}
	return nil
}

// Down is `cotal down`: with --preserve-state the seats preserved for the
// next up, with -f only what up -f started from the file, else the mesh
// stopped by host.Down's rule. A bare down refused for live seats says so
// and returns ErrReported.
func Down(ctx context.Context, c Caller, o DownOptions) error {
	if err := o.Check(); err != nil {
		return err
	}
	if o.File != "" {
		c, m, err := c.withManifest(o.File)
		if err != nil {
			return err
		}
		return downFile(ctx, c, o, m)
	}
	c, _, err := c.resolved("")
	if err != nil {
		return err
	}
	if o.Preserve {
		return downPreserve(ctx, c, o)
	}
	p := c.paths
	d, err := host.Down(ctx, p, host.DownOptions{WithAgents: o.WithAgents, KeepSeats: o.KeepSeats, Timeout: o.Timeout, Managers: c.Managers,
		Note: func(format string, a ...any) { fmt.Fprintf(c.Err, format, a...) },
		Seats: func(stopped []string) {
			if !o.JSON {
				clirender.SeatsStopped(c.Out, stopped)
			}
		}})
	var live *host.LiveSeatsError
	if errors.As(err, &live) {
		clirender.LiveSeats(c.Err, live.Live)
		return ErrReported
	}
	if err != nil {
		return err
	}
	res := clirender.DownJSON{Space: p.Space, Stopped: d.Stopped, PID: d.PID, SeatsStopped: clirender.NonNil(d.SeatsStopped), SeatsKept: d.SeatsKept}
	if o.JSON {
		clirender.JSON(c.Out, res)
	} else {
		clirender.Down(c.Out, res)
	}
	return nil
}

// downPreserve is `cotal down --preserve-state`: refused, naming them,
// while seats of other managers than the mesh's own run, since the mesh
// cannot preserve them.
func downPreserve(ctx context.Context, c Caller, o DownOptions) error {
	p := c.paths
	if st, err := host.Probe(p); err == nil && st.Running {
		if err := refuseUnpreservable(c); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	res := clirender.PreserveJSON{Space: p.Space, Preserved: []string{}}
	pr, err := host.StopPreserving(ctx, p, func(pid int) { clirender.Waiting(c.Err, p.Space, pid, "preserve its seats and stop") })
	switch {
	case errors.Is(err, host.ErrNotRunning):
	case err != nil:
		return err
	default:
		res.Stopped, res.PID, res.Ready, res.Inventory = true, pr.PID, true, host.PreserveDir(p)
		res.Preserved = append(res.Preserved, pr.Inventory.Names()...)
		res.Processes, res.Broker = pr.Mark.Processes, pr.Mark.Broker
	}
	if o.JSON {
		clirender.JSON(c.Out, res)
	} else {
		clirender.Preserved(c.Out, res)
	}
	return nil
}

// refuseUnpreservable says which seats run under supervise managers and
// returns ErrReported; nil when none does.
func refuseUnpreservable(c Caller) error {
	cl, nc, err := c.Managers()
	if err != nil {
		return fmt.Errorf("cannot ask the managers for their seats (%v): nothing was stopped", err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	rows, err := cl.Running(ctx)
	if err != nil {
		return fmt.Errorf("cannot ask the managers for their seats (%v): nothing was stopped", err)
	}
	names, err := host.Unpreservable(c.paths, rows)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		clirender.Unpreservable(c.Err, names)
		return ErrReported
	}
	return nil
}

// discardPreserved is `cotal up --fresh`: it says what it discards.
func discardPreserved(c Caller) error {
	inv, err := host.DiscardPreserved(c.paths)
	if err != nil {
		return fmt.Errorf("discarding the preserved inventory: %w", err)
	}
	if inv != nil {
		clirender.Discarded(c.Out, inv.Written, inv.Names())
	}
	return nil
}
