package launch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/internal/quit"
	"github.com/cotal-go/cotal/manifest"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/attach/tty"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/tui"
)

// DashboardOptions are the flags of bare `cotal`.
type DashboardOptions struct {
	Up               UpOptions
	NoBell, NoNotify bool
}

// screen is how the dashboard reaches a person away from it and the key
// that ends an attach.
type screen struct {
	bell      bool
	notify    tui.Notify
	detachKey byte
}

// newScreen reads the dashboard's alerting flags and its environment (the
// detach key, the desktop notifier); a value it cannot use is bad input.
func newScreen(o DashboardOptions) (screen, error) {
	key, err := tty.ParseDetachKey(os.Getenv(tty.DetachKeyEnv))
	if err != nil {
		return screen{}, cliargs.UsageError{Err: err}
	}
	s := screen{bell: !o.NoBell, detachKey: key}
	if !o.NoNotify {
		if s.notify, err = tui.PickNotify(os.Getenv, exec.LookPath); err != nil {
			return screen{}, cliargs.UsageError{Err: err}
		}
	}
	return s, nil
}

// PersonaDir is the project whose personas the spawn picker lists: the one
// a manager started here reads (the nearest .cotal above, else here).
func PersonaDir() string {
	cwd, _ := os.Getwd()
	if dir := config.ProjectDir(cwd); dir != "" {
		return dir
	}
	return cwd
}

// Dashboard is bare `cotal`: with --detach, or when stdin or stdout is
// not a terminal, `cotal up`. When no process serves the space it hosts
// the mesh in this process first (its log goes to mesh.log: the screen is
// the dashboard's) and stops it on quit; otherwise it is a client and
// quitting leaves the mesh running. The dashboard asks before quitting
// with live seats; a quit signal ends it without asking, and a closed
// terminal leaves a mesh with live seats running (host.Hangup).
func Dashboard(ctx context.Context, c Caller, do DashboardOptions) error {
	o := do.Up
	if o.Detach || !c.Terminal {
		return Up(ctx, c, o)
	}
	s, err := newScreen(do)
	if err != nil {
		return err
	}
	if err := o.Check(); err != nil {
		return err
	}
	c, _, err = c.resolved("")
	if err != nil {
		return err
	}
	p := c.paths
	if err := config.EnsureDir(p.StoreDir, 0o700); err != nil {
		return err
	}
	logf, err := os.OpenFile(p.LogFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening log %s: %w", p.LogFile(), err)
	}
	defer logf.Close()
	var hosted atomic.Pointer[host.Host]
	ctx, stop, headless := quit.UntilOrHangup(ctx, func() bool { h := hosted.Load(); return h != nil && h.Hangup(logf) })
	defer stop()

	var h *host.Host
	if c.Server == "" {
		h, err = host.StartUnlessRunning(ctx, host.Config{Data: c.data, Paths: p, Open: o.Open, Sync: o.Sync, Log: logf, Verbose: o.Verbose, MaxSessions: o.MaxSessions})
		if err != nil {
			return err
		}
	}
	hosting := h != nil
	stopMesh := func() error { return nil }
	if hosting {
		hosted.Store(h)
		stopMesh = h.Serve(ctx)
	}
	sink := tui.NewLogSink(logf)
	opts := mesh.Options{OneShot: true, Echoes: true, Logf: sink.Logf}
	follow := func() (string, int, bool) {
		rec, err := config.ReadBrokerRecord(p)
		return rec.URL, rec.PID, err == nil && rec.URL != ""
	}
	if !hosting && c.Server == "" {
		// A client follows the mesh through restarts: every reconnect
		// dials where broker.json says it runs now.
		opts.Redial = func() string { url, _, _ := follow(); return url }
	}
	e, err := c.Endpoint(ctx, opts)
	if err != nil {
		_ = stopMesh()
		return err
	}
	rec, _ := config.ReadBrokerRecord(p)
	cfg := tui.Config{
		Space: p.Space, Hosting: hosting, Mode: rec.Mode, Sync: rec.Sync, URL: rec.URL, PID: rec.PID,
		Endpoint: e, Bell: s.bell, Notify: s.notify, Log: sink, DetachKey: s.detachKey,
	}
	local := ""
	if hosting && h.Manager() != nil {
		cfg.ConfirmQuit = h.Live
		local = h.Manager().InstanceID()
	}
	project := PersonaDir()
	desk := tui.NewManagers(func() (*client.Client, error) {
		ec, _, err := c.Control() // the desk closes the connection through the client
		if err != nil {
			return nil, err
		}
		return client.New(ec), nil
	}, func(context.Context) ([]client.PersonaChoice, error) { return seat.PersonaChoices(project) }, local)
	defer desk.Close()
	desk.SetDeclared(func() []string { return manifest.DeclaredSeats(p) })
	cfg.SeatSource, cfg.SeatControl, cfg.Diff, cfg.Review = desk, desk, diffText, review(c)
	if c.Server != "" && !hosting {
		cfg.URL, cfg.PID, cfg.Mode, cfg.Sync = c.Server, 0, "", ""
	} else if !hosting {
		cfg.Follow = follow
	}
	runErr := tui.Run(ctx, cfg)
	desk.Close()
	_ = e.Close()
	if !hosting {
		pid := cfg.PID
		if _, now, ok := follow(); ok && c.Server == "" {
			pid = now // it may have restarted meanwhile
		}
		clirender.LeftDashboard(c.Out, p.Space, pid)
		return runErr
	}
	headless(c.Quit(h))
	if err := stopMesh(); err != nil && runErr == nil {
		runErr = fmt.Errorf("stopping mesh %s: %w", p.Space, err)
	}
	clirender.MeshStopped(c.Out, p.Space)
	return runErr
}
