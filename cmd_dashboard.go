package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/manifest"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/attach/tty"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/tui"
)

// addDashboardFlags registers the flags only bare `cotal` has.
func addDashboardFlags(fs *pflag.FlagSet) {
	fs.Bool("no-bell", false, "do not ring the terminal bell when a seat starts needing you")
	fs.Bool("no-notify", false, "raise no desktop notification when a seat starts needing you (also "+tui.NotifyEnv+"=off)")
}

// runDashboardCmd is bare `cotal`: the dashboard, hosting the space's mesh
// or as a client of the one already running. With --detach, or when
// stdin or stdout is not a terminal, it is `cotal up` instead.
func runDashboardCmd(cmd *cobra.Command, g *globals) error {
	fs := cmd.Flags()
	if fs.Changed("file") || fs.Changed("apply") || fs.Changed("prune") {
		return usagef("-f, --apply and --prune apply a manifest: run `cotal up -f FILE`, then `cotal` for the dashboard")
	}
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
	if n, err := fs.GetInt("max-sessions"); err == nil {
		f.maxSessions = n
	}
	noBell, _ := fs.GetBool("no-bell")
	noNotify, _ := fs.GetBool("no-notify")
	if f.detach || !interactive(g) {
		return runUp(cmd.Context(), g, f)
	}
	key, err := tty.ParseDetachKey(os.Getenv(tty.DetachKeyEnv))
	if err != nil {
		return usage(err)
	}
	var notify tui.Notify
	if !noNotify {
		if notify, err = tui.PickNotify(os.Getenv, exec.LookPath); err != nil {
			return usage(err)
		}
	}
	return runDashboard(cmd.Context(), g, f, alerting{bell: !noBell, notify: notify}, key)
}

// alerting is how the dashboard reaches a person away from its screen.
type alerting struct {
	bell   bool
	notify tui.Notify
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
// with live seats; a quit signal ends it without asking, and a closed
// terminal leaves a mesh with live seats running (host.Hangup).
func runDashboard(ctx context.Context, g *globals, f *upFlags, al alerting, detachKey byte) error {
	if err := f.check(); err != nil {
		return err
	}
	data, p, _, err := g.paths()
	if err != nil {
		return err
	}
	if err := config.EnsureDir(p.StoreDir, 0o700); err != nil {
		return err
	}
	logf, err := os.OpenFile(p.LogFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening log %s: %w", p.LogFile(), err)
	}
	defer logf.Close()
	var hosted atomic.Pointer[host.Host]
	ctx, stop, headless := untilQuitOrHangup(ctx, func() bool { h := hosted.Load(); return h != nil && h.Hangup(logf) })
	defer stop()

	var h *host.Host
	if g.server == "" {
		h, err = host.StartUnlessRunning(ctx, host.Config{Data: data, Paths: p, Open: f.open, Sync: f.sync, Log: logf, Verbose: f.verbose, MaxSessions: f.maxSessions})
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
	if !hosting && g.server == "" {
		// A client follows the mesh through restarts: every reconnect
		// dials where broker.json says it runs now.
		opts.Redial = func() string { url, _, _ := follow(); return url }
	}
	e, err := g.endpoint(ctx, opts)
	if err != nil {
		_ = stopMesh()
		return err
	}
	rec, _ := config.ReadBrokerRecord(p)
	cfg := tui.Config{
		Space: p.Space, Hosting: hosting, Mode: rec.Mode, Sync: rec.Sync, URL: rec.URL, PID: rec.PID,
		Endpoint: e, Bell: al.bell, Notify: al.notify, Log: sink, DetachKey: detachKey,
	}
	local := ""
	if hosting && h.Manager() != nil {
		cfg.ConfirmQuit = h.Live
		local = h.Manager().InstanceID()
	}
	project := personaDir()
	desk := tui.NewManagers(func() (*client.Client, error) {
		c, _, err := g.epClient() // the desk closes the connection through the client
		if err != nil {
			return nil, err
		}
		return client.New(c), nil
	}, func(context.Context) ([]client.PersonaChoice, error) { return seat.PersonaChoices(project) }, local)
	defer desk.Close()
	desk.SetDeclared(func() []string { return manifest.DeclaredSeats(p) })
	cfg.SeatSource, cfg.SeatControl, cfg.Diff, cfg.Review = desk, desk, diffText, dashboardReview(g)
	if g.server != "" && !hosting {
		cfg.URL, cfg.PID, cfg.Mode, cfg.Sync = g.server, 0, "", ""
	} else if !hosting {
		cfg.Follow = follow
	}
	runErr := tui.Run(ctx, cfg)
	desk.Close()
	_ = e.Close()
	if !hosting {
		pid := cfg.PID
		if _, now, ok := follow(); ok && g.server == "" {
			pid = now // it may have restarted meanwhile
		}
		fmt.Fprintf(g.stdout, "left the dashboard; mesh %s is still running (pid %d); `cotal down --space %s` stops it\n", p.Space, pid, p.Space)
		return runErr
	}
	headless(hostQuit(g, h))
	if err := stopMesh(); err != nil && runErr == nil {
		runErr = fmt.Errorf("stopping mesh %s: %w", p.Space, err)
	}
	fmt.Fprintf(g.stdout, "mesh %s stopped\n", p.Space)
	return runErr
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
