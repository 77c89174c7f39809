package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/app"
	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
)

// envDetachedChild marks the background process `up --detach` starts.
const envDetachedChild = "COTAL_DETACHED_CHILD"

type upFlags struct {
	detach  bool
	open    bool
	sync    string
	verbose bool
	timeout time.Duration
}

func newUpCmd(g *globals) *cobra.Command {
	f := &upFlags{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the space's mesh (foreground until Ctrl-C, or --detach)",
		Long: `Start the mesh of a space: an embedded NATS server with JetStream on
loopback, provisioned with the space's streams and buckets.

By default clients need per-agent credentials (see "cotal mint"); --open runs
without any authentication. Writes are fsynced before they are acknowledged;
--sync interval trades that for speed and can lose acknowledged messages on an
OS crash or power loss.

If the space is already running, up says so and exits 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runUp(cmd.Context(), g, f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.detach, "detach", false, "run the mesh in the background and return once it is ready")
	fl.BoolVar(&f.open, "open", false, "run without authentication (anyone on this machine can read and post as anyone)")
	fl.StringVar(&f.sync, "sync", config.SyncAlways, "store durability: always (fsync before every ack) or interval (faster, can lose acked writes on a crash)")
	fl.BoolVar(&f.verbose, "verbose", false, "log the broker's notices too")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "with --detach: how long to wait for the mesh to be ready")
	return cmd
}

func runUp(ctx context.Context, g *globals, f *upFlags) error {
	if f.sync != config.SyncAlways && f.sync != config.SyncInterval {
		return usagef("--sync %q: use always or interval", f.sync)
	}
	data, p, _, err := g.paths()
	if err != nil {
		return err
	}
	if f.detach && os.Getenv(envDetachedChild) == "" {
		return upDetached(g, p, f)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	m, err := app.Start(ctx, app.Config{Data: data, Paths: p, Open: f.open, Sync: f.sync, Log: g.stderr, Verbose: f.verbose})
	var running *app.AlreadyRunningError
	if errors.As(err, &running) {
		fmt.Fprintln(g.stdout, running.Error())
		return nil
	}
	if err != nil {
		return err
	}
	b := m.Broker()
	mode := "auth mode: per-agent credentials"
	if f.open {
		mode = "OPEN mode: no authentication, owner local; anyone on this machine can read and post as anyone"
	}
	fmt.Fprintf(g.stdout, "mesh %s up on %s (pid %d, %s)\n", p.Space, b.URL(), os.Getpid(), mode)
	fmt.Fprintf(g.stdout, "store %s (limit %s)\n", p.StoreDir, humanBytes(b.MaxStore()))
	if f.sync == config.SyncInterval {
		fmt.Fprintln(g.stdout, "WARNING: --sync interval: the store is fsynced every 2 minutes, so an OS crash or power loss can lose messages the mesh already acknowledged")
	}
	if os.Getenv(envDetachedChild) == "" {
		fmt.Fprintln(g.stdout, "press Ctrl-C to stop")
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	live := func() []string { return nil }
	if mgr := m.Manager(); mgr != nil {
		live = mgr.Live
	}
	waitForQuit(g, live)
	cancel()
	err = <-done
	fmt.Fprintf(g.stdout, "mesh %s stopped\n", p.Space)
	return err
}

// upDetached starts `cotal up` as a background process in its own session,
// its output going to the space's mesh.log, and waits until it has written
// broker.json (ready and provisioned) or has exited.
func upDetached(g *globals, p config.Paths, f *upFlags) error {
	if err := config.EnsureDir(p.StoreDir, 0o700); err != nil {
		return err
	}
	if lock, err := broker.AcquireLockPatiently(p.LockFile(), 3*time.Second); err != nil {
		var lerr *broker.LockError
		if errors.As(err, &lerr) {
			rec, _ := config.ReadBrokerRecord(p)
			fmt.Fprintf(g.stdout, "mesh %s already running (pid %d, url %s)\n", p.Space, lerr.PID, rec.URL)
			return nil
		}
		return err
	} else {
		lock.Release()
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	args := []string{"up", "--space", p.Space, "--store-dir", p.StoreDir, "--sync", f.sync}
	if f.open {
		args = append(args, "--open")
	}
	if f.verbose {
		args = append(args, "--verbose")
	}
	logf, err := os.OpenFile(p.LogFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening log %s: %w", p.LogFile(), err)
	}
	defer logf.Close()
	logStart, _ := logf.Seek(0, io.SeekEnd)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), envDetachedChild+"=1")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the background mesh: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	start := time.Now()
	deadline := time.NewTimer(f.timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	said := false
	for {
		select {
		case err := <-exited:
			rec, rerr := config.ReadBrokerRecord(p)
			if err == nil && rerr == nil && rec.Stopped.IsZero() && broker.PIDAlive(rec.PID) {
				fmt.Fprintf(g.stdout, "mesh %s already running (pid %d, url %s)\n", p.Space, rec.PID, rec.URL)
				return nil
			}
			return fmt.Errorf("background mesh exited before it was ready (%v); its log %s says:\n%s", err, p.LogFile(), logTail(p.LogFile(), logStart))
		case <-deadline.C:
			return fmt.Errorf("background mesh (pid %d) not ready after %s; see %s, stop it with `cotal down --space %s`", cmd.Process.Pid, f.timeout, p.LogFile(), p.Space)
		case <-tick.C:
			rec, err := config.ReadBrokerRecord(p)
			if err == nil && rec.PID == cmd.Process.Pid && rec.Stopped.IsZero() {
				fmt.Fprintf(g.stdout, "mesh %s up on %s (pid %d, %s mode, sync %s) in %s\n", p.Space, rec.URL, rec.PID, rec.Mode, rec.Sync, time.Since(start).Round(time.Millisecond))
				if rec.Mode == config.ModeOpen {
					fmt.Fprintln(g.stdout, "OPEN mode: no authentication; anyone on this machine can read and post as anyone")
				}
				if rec.Sync == config.SyncInterval {
					fmt.Fprintln(g.stdout, "WARNING: --sync interval: an OS crash or power loss can lose messages the mesh already acknowledged")
				}
				fmt.Fprintf(g.stdout, "log %s; stop it with `cotal down --space %s`\n", p.LogFile(), p.Space)
				_ = cmd.Process.Release()
				return nil
			}
			if !said && time.Since(start) > 2*time.Second {
				said = true
				fmt.Fprintf(g.stderr, "waiting for mesh %s to be ready (pid %d)...\n", p.Space, cmd.Process.Pid)
			}
		}
	}
}

// logTail returns what the log gained since offset, trimmed to its last lines.
func logTail(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < offset {
		return "(no log)"
	}
	b = bytes.TrimSpace(b[offset:])
	lines := strings.Split(string(b), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return "  " + strings.Join(lines, "\n  ")
}
