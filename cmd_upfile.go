package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/manifest"
	"github.com/cotal-go/cotal/manifest/apply"
)

// fileFlags are up's and down's manifest flags.
type fileFlags struct {
	file         string
	apply, prune bool
}

// applyWait bounds one up -f past the mesh's start: the registry, the
// mints and every spawn's readiness.
const applyWait = 5 * time.Minute

// upJSONFile is `cotal up -f --json`.
type upJSONFile struct {
	Plan    *manifest.Plan `json:"plan"`
	Outcome apply.Outcome  `json:"outcome"`
	Started bool           `json:"startedMesh"`
}

// runUpFile takes the space to what the manifest says: the mesh started
// in the background when none runs, then the plan's steps.
func runUpFile(ctx context.Context, g *globals, f *upFlags) error {
	if f.ff.file == "" {
		return usagef("--apply and --prune go with -f FILE, the manifest they apply")
	}
	if f.open {
		return usagef("--open with -f: the file's broker.auth says how the mesh runs")
	}
	if err := checkMaxSessions(f.maxSessions); err != nil {
		return err
	}
	m, err := loadManifest(g, f.ff.file)
	if err != nil {
		return err
	}
	_, p, _, err := g.paths()
	if err != nil {
		return err
	}
	s, err := host.Probe(p)
	if err != nil {
		return err
	}
	started := false
	if !s.Running {
		uf := *f
		uf.detach, uf.open, uf.json, uf.urls = true, m.Open, false, m.Servers
		out := g.stdout
		if f.json {
			g.stdout = io.Discard // the JSON below says it started
		}
		err := upDetached(ctx, g, p, &uf)
		g.stdout = out
		if err != nil {
			return err
		}
		started = true
	}
	ms, done, err := manifestMesh(g, p)
	if err != nil {
		return err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, applyWait)
	defer cancel()
	o := apply.Options{Restart: f.ff.apply, Prune: f.ff.prune}
	var confirm func(*manifest.Plan) bool
	if !f.json {
		confirm = func(plan *manifest.Plan) bool { return confirmRestarts(g, plan) }
		o.Progress = func(s manifest.Step, what string) {
			if what != "start" {
				fmt.Fprintf(g.stdout, "%s: %s\n", s.What(), what)
			}
		}
	}
	plan, out, err := apply.Up(ctx, ms, m, started, o, confirm)
	if err != nil {
		return err
	}
	if f.json {
		if err := g.resultJSON(upJSONFile{Plan: plan, Outcome: out, Started: started}); err != nil {
			return err
		}
	} else {
		clirender.Outcome(g.stdout, g.stderr, m, plan, out)
	}
	if len(out.Failed) > 0 {
		return exitError{exitFail}
	}
	return nil
}

// confirmRestarts asks the person, at a terminal, whether to restart the
// seats whose launch changed; without a terminal they wait for --apply.
func confirmRestarts(g *globals, plan *manifest.Plan) bool {
	seats := clirender.Restarts(plan)
	if len(seats) == 0 || !interactive(g) {
		return false
	}
	fmt.Fprintf(g.stdout, "the launch of %s changed; restart them now? [y/N] ", strings.Join(seats, ", "))
	line, _ := bufio.NewReader(g.stdin).ReadString('\n')
	return clirender.YesNo(line)
}

// downJSONFile is `cotal down -f --json`.
type downJSONFile struct {
	Space        string   `json:"space"`
	SeatsStopped []string `json:"seatsStopped"`
	Stopped      bool     `json:"stopped"` // the mesh too
	Kept         string   `json:"kept,omitempty"`
}

// runDownFile stops what up -f started from the file: its seats, its
// endpoints' credentials and, when up -f started the mesh and nothing
// else runs on it, the mesh.
func runDownFile(ctx context.Context, g *globals, file string, timeout time.Duration, asJSON bool) error {
	m, err := loadManifest(g, file)
	if err != nil {
		return err
	}
	_, p, _, err := g.paths()
	if err != nil {
		return err
	}
	res := downJSONFile{Space: m.Space, SeatsStopped: []string{}}
	say := func(format string, a ...any) {
		if !asJSON {
			fmt.Fprintf(g.stdout, format, a...)
		}
	}
	st, err := manifest.ReadState(p)
	if err != nil {
		return err
	}
	s, err := host.Probe(p)
	if err != nil {
		return err
	}
	switch {
	case st == nil:
		say("nothing was started from a manifest in space %s\n", m.Space)
	case !s.Running:
		say("mesh %s is not running\n", m.Space)
	default:
		ms, done, err := manifestMesh(g, p)
		if err != nil {
			return err
		}
		defer done()
		actx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		r, err := apply.DownFile(actx, ms, st)
		res.SeatsStopped, res.Kept = append(res.SeatsStopped, r.Seats...), r.Kept
		if len(r.Seats) > 0 {
			say("stopped %s\n", strings.Join(r.Seats, ", "))
		}
		if err != nil {
			return err
		}
		if r.Mesh {
			pid, err := host.Stop(actx, p, func(pid int) { fmt.Fprintf(g.stderr, "waiting for mesh %s (pid %d) to stop...\n", p.Space, pid) })
			if err != nil && !errors.Is(err, host.ErrNotRunning) {
				return err
			}
			res.Stopped = true
			say("mesh %s stopped (pid %d)\n", m.Space, pid)
		} else {
			say("mesh %s keeps running: %s\n", m.Space, res.Kept)
		}
	}
	if asJSON {
		return g.resultJSON(res)
	}
	return nil
}

func addUpFileFlags(cmd *cobra.Command, ff *fileFlags) {
	fl := cmd.Flags()
	fl.StringVarP(&ff.file, "file", "f", "", "apply this manifest (a cotal.yaml, or a folder holding one): start the mesh in the background if none runs, then its registry, credentials and seats")
	fl.BoolVar(&ff.apply, "apply", false, "with -f: restart the seats whose launch changed without asking")
	fl.BoolVar(&ff.prune, "prune", false, "with -f: stop the agents the file no longer names")
}
