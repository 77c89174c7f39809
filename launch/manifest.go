package launch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/manifest"
	"github.com/cotal-go/cotal/manifest/apply"
)

// applyWait bounds one up -f past the mesh's start: the registry, the
// mints and every spawn's readiness.
const applyWait = 5 * time.Minute

// LoadManifest reads the manifest named (or, with "", the cotal.yaml of
// this folder or the nearest above); space is what --space says ("" for
// nothing), which must be the file's. A bad file is bad input.
func LoadManifest(file, space string) (*manifest.Manifest, error) {
	cwd, _ := os.Getwd()
	file, err := manifest.Locate(file, cwd)
	if err != nil {
		return nil, cliargs.UsageError{Err: err}
	}
	m, err := manifest.Load(file)
	var me *manifest.Error
	switch {
	case errors.As(err, &me):
		return nil, cliargs.Usagef("%v\nnothing was started or changed", err)
	case err != nil:
		return nil, cliargs.Usagef("reading the manifest: %v", err)
	}
	if space != "" && space != m.Space {
		return nil, cliargs.Usagef("--space (or COTAL_SPACE) says %q, and %s describes space %q: leave --space out or change the file", space, m.Path, m.Space)
	}
	return m, nil
}

// checkFile refuses the flags up -f does not take.
func (o *UpOptions) checkFile() error {
	if o.File.File == "" {
		return cliargs.Usagef("--apply and --prune go with -f FILE, the manifest they apply")
	}
	if o.Open {
		return cliargs.Usagef("--open with -f: the file's broker.auth says how the mesh runs")
	}
	return CheckMaxSessions(o.MaxSessions)
}

// meshOf connects to the running mesh of c as the operator.
func meshOf(c Caller) (apply.Mesh, func(), error) {
	cl, nc, err := c.Managers()
	if err != nil {
		return apply.Mesh{}, nil, err
	}
	ms := apply.Mesh{Paths: c.paths, NC: nc, Seats: cl}
	if s, err := host.Probe(c.paths); err == nil {
		if rec, err := s.Serving(); err == nil {
			ms.Open = rec.Mode == config.ModeOpen
		}
	}
	return ms, nc.Close, nil
}

// Plan is `cotal plan`: what up -f would do now with the manifest file
// names, against what runs when the space's mesh runs, else against what
// the last up -f applied.
func Plan(c Caller, file string) (*manifest.Plan, error) {
	c, m, err := c.withManifest(file)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if s, err := host.Probe(c.paths); err != nil || !s.Running {
		plan, _, err := apply.Plan(ctx, c.paths, nil, m)
		return plan, err
	}
	ms, done, err := meshOf(c)
	if err != nil {
		return nil, err
	}
	defer done()
	plan, _, err := apply.Plan(ctx, c.paths, &ms, m)
	return plan, err
}

// upJSONFile is `cotal up -f --json`.
type upJSONFile struct {
	Plan    *manifest.Plan `json:"plan"`
	Outcome apply.Outcome  `json:"outcome"`
	Started bool           `json:"startedMesh"`
}

// upFile takes the space to what the manifest says: the mesh started in
// the background when none runs, then the plan's steps, each said as it
// is taken. A failed step ends it with ErrReported once the outcome is
// said.
func upFile(ctx context.Context, c Caller, o UpOptions, m *manifest.Manifest) error {
	s, err := host.Probe(c.paths)
	if err != nil {
		return err
	}
	started := false
	if !s.Running {
		uo, uc := o, c
		uo.Detach, uo.Open, uo.JSON, uo.URLs = true, m.Open, false, m.Servers
		if o.JSON {
			uc.Out = io.Discard // the JSON below says it started
		}
		if err := detach(ctx, uc, uo); err != nil {
			return err
		}
		started = true
	}
	ms, done, err := meshOf(c)
	if err != nil {
		return err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, applyWait)
	defer cancel()
	ao := apply.Options{Restart: o.File.Apply, Prune: o.File.Prune}
	var confirm func(*manifest.Plan) bool
	if !o.JSON {
		confirm = func(plan *manifest.Plan) bool { return confirmRestarts(c, plan) }
		ao.Progress = func(s manifest.Step, what string) {
			if what != "start" {
				fmt.Fprintf(c.Out, "%s: %s\n", s.What(), what)
			}
		}
	}
	plan, out, err := apply.Up(ctx, ms, m, started, ao, confirm)
	if err != nil {
		return err
	}
	if o.JSON {
		clirender.JSON(c.Out, upJSONFile{Plan: plan, Outcome: out, Started: started})
	} else {
		clirender.Outcome(c.Out, c.Err, m, plan, out)
	}
	if len(out.Failed) > 0 {
		return ErrReported
	}
	return nil
}

// confirmRestarts asks the person, at a terminal, whether to restart the
// seats whose launch changed; without a terminal they wait for --apply.
func confirmRestarts(c Caller, plan *manifest.Plan) bool {
	seats := clirender.Restarts(plan)
	if len(seats) == 0 || !c.Terminal {
		return false
	}
	fmt.Fprintf(c.Out, "the launch of %s changed; restart them now? [y/N] ", strings.Join(seats, ", "))
	line, _ := bufio.NewReader(c.In).ReadString('\n')
	return clirender.YesNo(line)
}

// downFile stops what up -f started from the file: its seats, its
// endpoints' credentials and, when up -f started the mesh and nothing
// else runs on it, the mesh.
func downFile(ctx context.Context, c Caller, o DownOptions, m *manifest.Manifest) error {
	p := c.paths
	res := clirender.DownFileJSON{Space: m.Space, SeatsStopped: []string{}}
	out := c.Out
	if o.JSON {
		out = io.Discard
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
		res.Why = "none"
	case !s.Running:
		res.Why = "down"
	default:
		ms, done, err := meshOf(c)
		if err != nil {
			return err
		}
		defer done()
		actx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		r, err := apply.DownFile(actx, ms, st)
		res.SeatsStopped, res.Kept = append(res.SeatsStopped, r.Seats...), r.Kept
		clirender.Stopping(out, r.Seats)
		if err != nil {
			return err
		}
		if r.Mesh {
			pid, err := host.Stop(actx, p, func(pid int) { clirender.Waiting(c.Err, p.Space, pid, "stop") })
			if err != nil && !errors.Is(err, host.ErrNotRunning) {
				return err
			}
			res.Stopped, res.PID = true, pid
		}
	}
	if o.JSON {
		clirender.JSON(c.Out, res)
	} else {
		clirender.DownFile(c.Out, res)
	}
	return nil
}

// Topology is `cotal topology`: each seat and endpoint the manifest file
// names declares, its rights in the file beside those its credential on
// the mesh holds.
func Topology(c Caller, file string) (clirender.TopologyJSON, error) {
	c, m, err := c.withManifest(file)
	if err != nil {
		return clirender.TopologyJSON{}, err
	}
	held, err := apply.Held(c.paths)
	if err != nil {
		return clirender.TopologyJSON{}, err
	}
	return clirender.TopologyJSON{Space: m.Space, Manifest: m.Path, Rows: manifest.Topology(m, held)}, nil
}
