package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
)

// preserveJSON is `cotal down --preserve-state --json`.
type preserveJSON struct {
	Space     string   `json:"space"`
	Stopped   bool     `json:"stopped"`
	PID       int      `json:"pid,omitempty"`
	Preserved []string `json:"preserved"`
	Inventory string   `json:"inventory,omitempty"`
	Ready     bool     `json:"ready"`
}

// runDownPreserve is `cotal down --preserve-state`.
func runDownPreserve(ctx context.Context, g *globals, others bool, timeout time.Duration, asJSON bool) error {
	if others {
		return usagef("--preserve-state stops the seats for the next up to resume: it goes with none of --with-agents, --keep-seats, -f")
	}
	_, p, _, err := g.paths()
	if err != nil {
		return err
	}
	if st, err := host.Probe(p); err == nil && st.Running {
		if err := refuseUnpreservable(g, p); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res := preserveJSON{Space: p.Space, Preserved: []string{}}
	pr, err := host.StopPreserving(ctx, p, func(pid int) {
		fmt.Fprintf(g.stderr, "waiting for mesh %s (pid %d) to preserve its seats and stop...\n", p.Space, pid)
	})
	switch {
	case errors.Is(err, host.ErrNotRunning):
		if asJSON {
			return g.resultJSON(res)
		}
		fmt.Fprintf(g.stdout, "mesh %s is not running: nothing to preserve\n", p.Space)
		return nil
	case err != nil:
		return err
	}
	res.Stopped, res.PID, res.Ready, res.Inventory = true, pr.PID, true, host.PreserveDir(p)
	res.Preserved = append(res.Preserved, pr.Inventory.Names()...)
	if asJSON {
		return g.resultJSON(res)
	}
	fmt.Fprintf(g.stdout, "mesh %s stopped (pid %d); %d seat(s) preserved: %s\n", p.Space, pr.PID, len(res.Preserved), strings.Join(res.Preserved, ", "))
	fmt.Fprintf(g.stdout, "proved: %d seat and keeper process(es) gone; broker %s; the next `cotal up` resumes them (`cotal up --fresh` discards them)\n", pr.Mark.Processes, pr.Mark.Broker)
	return nil
}

// discardPreserved is `cotal up --fresh`: it says what it discards.
func discardPreserved(g *globals) error {
	_, p, _, err := g.paths()
	if err != nil {
		return err
	}
	inv, err := host.DiscardPreserved(p)
	if err != nil {
		return fmt.Errorf("discarding the preserved inventory: %w", err)
	}
	if inv == nil {
		return nil
	}
	names := inv.Names()
	fmt.Fprintf(g.stdout, "discarded the preserved inventory (written %s): %d seat(s) will not be resumed: %s; their credentials are revoked as the mesh starts\n",
		inv.Written.Local().Format(time.RFC3339), len(names), strings.Join(names, ", "))
	return nil
}

// refuseUnpreservable refuses, naming them, while seats of other managers
// than the mesh's own run: the mesh cannot preserve them.
func refuseUnpreservable(g *globals, p config.Paths) error {
	cl, nc, err := g.managers()
	if err != nil {
		return fmt.Errorf("cannot ask the managers for their seats (%v): nothing was stopped", err)
	}
	defer nc.Close()
	cctx, cancel := ctxTimeout()
	defer cancel()
	rows, err := cl.Running(cctx)
	if err != nil {
		return fmt.Errorf("cannot ask the managers for their seats (%v): nothing was stopped", err)
	}
	names, err := host.Unpreservable(p, rows)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		fmt.Fprintf(g.stderr, "cotal: %d seat(s) run under supervise managers, which down --preserve-state cannot preserve: %s\nstop them with `cotal stop <name>` (or stop their supervise process) first; nothing was stopped\n", len(names), strings.Join(names, ", "))
		return exitError{exitFail}
	}
	return nil
}
