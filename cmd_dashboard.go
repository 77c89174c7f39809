package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/wire"
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
// with live seats; a quit signal ends it without asking.
func runDashboard(ctx context.Context, g *globals, f *upFlags, al alerting, detachKey byte) error {
	if err := f.check(); err != nil {
		return err
	}
	data, p, _, err := g.paths()
	if err != nil {
		return err
	}
	// A closed terminal (SIGHUP) while the mesh hosted here runs seats
	// ends only the dashboard: closing a window never kills an agent's
	// work. The signals that stop the mesh from then on are registered
	// before the quit loop lets go of them, so none is missed.
	var hosted atomic.Pointer[host.Host]
	var headless atomic.Bool
	afterHangup := make(chan os.Signal, 1)
	ctx, stop := untilQuit(ctx, func(s os.Signal) bool {
		if h := hosted.Load(); s == syscall.SIGHUP && h != nil && len(h.Live()) > 0 {
			signal.Notify(afterHangup, os.Interrupt, syscall.SIGTERM)
			signal.Ignore(syscall.SIGHUP)
			headless.Store(true)
		}
		return true
	})
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
	hosted.Store(h)
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
	desk := newSeatDesk(g.epClient, personaDir(), local)
	defer desk.close()
	cfg.SeatSource, cfg.SeatControl = desk, desk
	if g.server != "" && !hosting {
		cfg.URL, cfg.PID, cfg.Mode, cfg.Sync = g.server, 0, "", ""
	} else if !hosting {
		cfg.Follow = follow
	}
	runErr := tui.Run(ctx, cfg)
	desk.close()
	_ = e.Close()
	if hosting && headless.Load() {
		runHeadless(g, h, logf, afterHangup, p.Space)
	}
	if hosting {
		if err := stopMesh(); err != nil && runErr == nil {
			runErr = fmt.Errorf("stopping mesh %s: %w", p.Space, err)
		}
		fmt.Fprintf(g.stdout, "mesh %s stopped\n", p.Space)
	} else {
		pid := cfg.PID
		if _, now, ok := follow(); ok && g.server == "" {
			pid = now // it may have restarted meanwhile
		}
		fmt.Fprintf(g.stdout, "left the dashboard; mesh %s is still running (pid %d); `cotal down --space %s` stops it\n", p.Space, pid, p.Space)
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
	h, err := host.Start(ctx, host.Config{Data: data, Paths: p, Open: f.open, Sync: f.sync, Log: log, Verbose: f.verbose, MaxSessions: f.maxSessions})
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

// seatDesk is the dashboard's way to the managers: tui's, over
// seat/client, dialled as the local operator; spawns go to local.
type seatDesk struct{ *tui.Managers }

func newSeatDesk(dial func() (*ep.Client, *nats.Conn, error), project, local string) seatDesk {
	managers := func() (*client.Client, error) {
		c, _, err := dial() // the desk closes the connection through the client
		if err != nil {
			return nil, err
		}
		return client.New(c), nil
	}
	return seatDesk{tui.NewManagers(managers, func(context.Context) ([]tui.PersonaChoice, error) { return personas(project) }, local)}
}

func (d seatDesk) close() { d.Close() }

// personas lists the personas of project for the spawn picker, each
// with what runs and whether messages are typed in, or why no seat can be
// spawned from it; with none it says where it looked.
func personas(project string) ([]tui.PersonaChoice, error) {
	names := seat.ListPersonas(project)
	if len(names) == 0 {
		return nil, fmt.Errorf("none in %s: add one as <name>.md", config.AgentsDir(project))
	}
	out := make([]tui.PersonaChoice, 0, len(names))
	for _, n := range names {
		c := tui.PersonaChoice{Name: n}
		if !wire.ValidToken(n) {
			c.Invalid = fmt.Sprintf("%q is not one token of A-Z a-z 0-9 _ (at most %d characters), and seats are named after their persona: rename %s and its name: line",
				n, wire.MaxTokenLength, filepath.Join(config.AgentsDir(project), n+".md"))
		} else if p, err := seat.LoadPersona(project, n); err != nil {
			c.Invalid = err.Error()
		} else {
			c.Harness, c.Typed = p.Harness, p.TypedIn()
		}
		out = append(out, c)
	}
	return out, nil
}

// runHeadless keeps the mesh hosted here running after the dashboard's
// terminal closed with seats live, until it is told to stop: SIGTERM
// (`cotal down --with-agents`) at once, SIGINT by the host's quit rule.
// Only the log can say so: the terminal is gone.
func runHeadless(g *globals, h *host.Host, log io.Writer, sigs chan os.Signal, space string) {
	defer signal.Stop(sigs)
	live := h.Live()
	fmt.Fprintf(log, "%s dashboard: the terminal closed with %d seat(s) running (%s); mesh %s stays up without a dashboard: `cotal` opens one, `cotal down --with-agents` stops it\n",
		time.Now().Format(time.RFC3339), len(live), strings.Join(live, ", "), space)
	quit := hostQuit(g, h)
	for s := range sigs {
		if quit(s) {
			return
		}
	}
}
