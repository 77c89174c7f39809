package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/tui"
)

// addDashboardFlags registers the flags only bare `cotal` has.
func addDashboardFlags(fs *pflag.FlagSet) {
	fs.Bool("no-bell", false, "do not ring the terminal bell when a seat starts waiting on you")
}

// runDashboardCmd is bare `cotal`: the dashboard, hosting the space's mesh
// or as a client of the one already running. With --detach, or when
// stdin or stdout is not a terminal, it is `cotal up` instead.
func runDashboardCmd(cmd *cobra.Command, g *globals) error {
	fs := cmd.Flags()
	f := &upFlags{sync: config.SyncAlways}
	f.detach, _ = fs.GetBool("detach")
	f.open, _ = fs.GetBool("open")
	f.verbose, _ = fs.GetBool("verbose")
	if s, err := fs.GetString("sync"); err == nil {
		f.sync = s
	}
	if d, err := fs.GetDuration("timeout"); err == nil {
		f.timeout = d
	}
	noBell, _ := fs.GetBool("no-bell")
	if f.detach || !interactive(g) {
		return runUp(cmd.Context(), g, f)
	}
	return runDashboard(cmd.Context(), g, f, !noBell)
}

// interactive reports whether a person is at a terminal on both ends.
func interactive(g *globals) bool {
	out, ok := g.stdout.(*os.File)
	return ok && term.IsTerminal(out.Fd()) && term.IsTerminal(os.Stdin.Fd())
}

// runDashboard shows the dashboard. When no process serves the space it
// hosts the mesh in this process first (its log goes to mesh.log: the
// screen is the dashboard's) and stops it on quit; otherwise it is a client
// and quitting leaves the mesh running. The dashboard asks before quitting
// with live seats; a quit signal ends it without asking.
func runDashboard(ctx context.Context, g *globals, f *upFlags, bell bool) error {
	if f.sync != config.SyncAlways && f.sync != config.SyncInterval {
		return usagef("--sync %q: use always or interval", f.sync)
	}
	data, p, _, err := g.paths()
	if err != nil {
		return err
	}
	ctx, stop := untilQuit(ctx, nil)
	defer stop()
	if err := config.EnsureDir(p.StoreDir, 0o700); err != nil {
		return err
	}
	logf, err := os.OpenFile(p.LogFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening log %s: %w", p.LogFile(), err)
	}
	defer logf.Close()

	h, err := hostUnlessRunning(ctx, g, data, p, f, logf)
	if err != nil {
		return err
	}
	hosting := h != nil
	stopMesh := func() error { return nil }
	if hosting {
		// The mesh outlives a quit signal until the dashboard has let go
		// of it.
		runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan error, 1)
		go func() { done <- h.Run(runCtx) }()
		stopMesh = func() error {
			cancel()
			return <-done
		}
	}

	sink := tui.NewLogSink(logf)
	e, err := g.endpoint(ctx, mesh.Options{OneShot: true, Logf: sink.Logf})
	if err != nil {
		_ = stopMesh()
		return err
	}
	rec, _ := config.ReadBrokerRecord(p)
	cfg := tui.Config{
		Space: p.Space, Hosting: hosting, Mode: rec.Mode, Sync: rec.Sync, URL: rec.URL, PID: rec.PID,
		Endpoint: e, Bell: bell, Log: sink,
	}
	local := ""
	if hosting && h.Manager() != nil {
		cfg.ConfirmQuit = h.Live
		local = h.Manager().InstanceID()
	}
	desk := newSeatDesk(g.epClient, personaDir(), local)
	defer desk.close()
	cfg.SeatSource, cfg.SeatControl = desk, desk
	if g.server != "" && !hosting {
		cfg.URL, cfg.PID, cfg.Mode, cfg.Sync = g.server, 0, "", ""
	}
	runErr := tui.Run(ctx, cfg)
	desk.close()
	_ = e.Close()
	if hosting {
		if err := stopMesh(); err != nil && runErr == nil {
			runErr = fmt.Errorf("stopping mesh %s: %w", p.Space, err)
		}
		fmt.Fprintf(g.stdout, "mesh %s stopped\n", p.Space)
	} else {
		fmt.Fprintf(g.stdout, "left the dashboard; mesh %s is still running (pid %d); `cotal down --space %s` stops it\n", p.Space, cfg.PID, p.Space)
	}
	return runErr
}

// hostUnlessRunning starts the space's mesh in this process and returns
// it, or returns nil when a process (its store lock says) or --server
// already serves it.
func hostUnlessRunning(ctx context.Context, g *globals, data string, p config.Paths, f *upFlags, log io.Writer) (*host.Host, error) {
	if g.server != "" {
		return nil, nil
	}
	h, err := host.Start(ctx, host.Config{Data: data, Paths: p, Open: f.open, Sync: f.sync, Log: log, Verbose: f.verbose})
	var running *host.AlreadyRunningError
	if errors.As(err, &running) {
		return nil, nil // be its client
	}
	return h, err
}

// personaDir is the project whose personas the spawn picker lists: the one
// a manager started here reads (the nearest .cotal above, else here).
func personaDir() string {
	cwd, _ := os.Getwd()
	if dir := config.ProjectDir(cwd); dir != "" {
		return dir
	}
	return cwd
}

// seatDesk is the dashboard's way to the managers: the census, screens and
// the seat commands over the control surface, as the local operator. It is
// a tui.SeatSource and a tui.SeatControl. mu guards the connection, which
// is made on first use and made again once it has closed.
type seatDesk struct {
	dial    func() (*ep.Client, *nats.Conn, error)
	project string
	local   string // the manager this process hosts: spawns go to it
	changed chan struct{}

	mu     sync.Mutex
	c      *ep.Client
	nc     *nats.Conn
	closed bool
}

func newSeatDesk(dial func() (*ep.Client, *nats.Conn, error), project, local string) *seatDesk {
	return &seatDesk{dial: dial, project: project, local: local, changed: make(chan struct{}, 1)}
}

func (d *seatDesk) client() (*ep.Client, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errors.New("the dashboard is closing")
	}
	if d.nc != nil && !d.nc.IsClosed() {
		return d.c, nil
	}
	c, nc, err := d.dial()
	if err != nil {
		return nil, err
	}
	d.c, d.nc = c, nc
	return c, nil
}

func (d *seatDesk) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.nc != nil {
		d.nc.Close()
	}
}

// poke asks the collector for a census now, after a command changed one.
func (d *seatDesk) poke() {
	select {
	case d.changed <- struct{}{}:
	default:
	}
}

func (d *seatDesk) Changes() <-chan struct{} { return d.changed }

func (d *seatDesk) Seats(ctx context.Context) (tui.Census, error) {
	c, err := d.client()
	if err != nil {
		return tui.Census{}, err
	}
	cs, err := takeCensus(ctx, c, "")
	if err != nil {
		if e := ep.AsError(err); e != nil && e.Code == ep.CodeFailedPrecondition {
			return tui.Census{}, nil // no manager registered yet
		}
		return tui.Census{}, err
	}
	out := tui.Census{Managers: len(cs.Managers)}
	for _, m := range cs.Missing {
		out.Missing = append(out.Missing, m.InstanceID)
	}
	now := time.Now().UnixMilli()
	for _, r := range cs.Rows {
		out.Seats = append(out.Seats, seatOfRow(r, now-r.ManagerNowMs))
	}
	return out, nil
}

// seatOfRow reads a ps row on this clock: skew is our clock minus the
// manager's, so the ages the dashboard prints are the manager's.
func seatOfRow(r censusRow, skew int64) tui.Seat {
	at := func(ms int64) time.Time {
		if ms == 0 {
			return time.Time{}
		}
		return time.UnixMilli(ms + skew)
	}
	return tui.Seat{
		Name: r.Name, PeerID: r.ID, Manager: r.Manager, Persona: r.Persona, Harness: r.Harness,
		State: r.State, Process: r.Process, PID: r.PID, Started: at(r.StartedMs), Exited: at(r.ExitedMs),
		LastOutput: at(r.LastOutputMs), Mesh: r.Mesh, MeshSince: at(r.MeshSinceMs), Activity: r.Activity,
		Sandbox: r.Sandbox,
	}
}

// call runs one manager command pinned to an instance and decodes its answer.
func (d *seatDesk) call(ctx context.Context, on, command string, args, out any) (*ep.Result, error) {
	c, err := d.client()
	if err != nil {
		return nil, err
	}
	var opts []ep.CallOption
	if on != "" {
		opts = append(opts, ep.On(on))
	}
	r, err := c.Call(ctx, seat.Endpoint, command, args, opts...)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		return nil, fmt.Errorf("%s answered with garbage: %w", command, err)
	}
	return r, nil
}

func (d *seatDesk) Screen(ctx context.Context, s tui.Seat) (tui.Screen, error) {
	var r seat.ScreenReply
	if _, err := d.call(ctx, s.Manager, "screen", map[string]string{"name": s.Name}, &r); err != nil {
		return tui.Screen{}, err
	}
	return tui.Screen{Text: r.Screen, Running: r.Running}, nil
}

func (d *seatDesk) Personas(context.Context) ([]string, error) {
	names := seat.ListPersonas(d.project)
	if len(names) == 0 {
		return nil, fmt.Errorf("none in %s: add one as <name>.md", config.AgentsDir(d.project))
	}
	return names, nil
}

func (d *seatDesk) Spawn(ctx context.Context, persona string) (tui.SpawnTicket, error) {
	var acc seat.SpawnAccepted
	r, err := d.call(ctx, d.local, "spawn", seat.SpawnArgs{Persona: persona}, &acc)
	if err != nil {
		return tui.SpawnTicket{}, err
	}
	d.poke()
	return tui.SpawnTicket{
		Persona: persona, Name: acc.Name, Manager: r.Responder.InstanceID, GoalID: acc.GoalID,
		Deadline: time.Duration(acc.ReadinessDeadlineMs) * time.Millisecond,
	}, nil
}

// AwaitSpawn polls the spawn's goal until it has its outcome, as `cotal
// spawn` does.
func (d *seatDesk) AwaitSpawn(ctx context.Context, t tui.SpawnTicket) (tui.SpawnOutcome, error) {
	defer d.poke()
	for {
		c, err := d.client()
		if err != nil {
			return tui.SpawnOutcome{}, err
		}
		res, ok, err := c.GoalResult(ctx, seat.Endpoint, t.GoalID, ep.On(t.Manager), ep.Timeout(5*time.Second))
		if err == nil && ok {
			o := tui.SpawnOutcome{State: tui.SpawnFailed}
			switch res.State {
			case ep.GoalSucceeded:
				o.State = tui.SpawnSucceeded
			case ep.GoalUncertain:
				o.State = tui.SpawnUncertain
			default:
				o.Message = res.State
				if res.Error != nil {
					o.Message = res.Error.Message
				}
			}
			return o, nil
		}
		select {
		case <-ctx.Done():
			return tui.SpawnOutcome{}, fmt.Errorf("waiting for %s to come up: %w", t.Name, ctx.Err())
		case <-time.After(150 * time.Millisecond):
		}
	}
}

func (d *seatDesk) Stop(ctx context.Context, s tui.Seat) (string, error) {
	var r seat.Row
	if _, err := d.call(ctx, s.Manager, "despawn", map[string]any{"name": s.Name, "graceful": true}, &r); err != nil {
		return "", err
	}
	d.poke()
	return r.Process, nil
}

func (d *seatDesk) Input(ctx context.Context, s tui.Seat, text string) (int, error) {
	var r seat.InputReply
	if _, err := d.call(ctx, s.Manager, "input", map[string]any{"name": s.Name, "text": text, "enter": true}, &r); err != nil {
		return 0, err
	}
	d.poke()
	return r.Bytes, nil
}
