package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/attach"
)

// envDetachedChild marks the background process `up --detach` starts.
const envDetachedChild = "COTAL_DETACHED_CHILD"

type upFlags struct {
	detach      bool
	open        bool
	sync        string
	verbose     bool
	timeout     time.Duration
	maxSessions int
	readiness   time.Duration // a spawned seat's readiness bound; 0: its harness's
	json        bool
	fresh       bool      // discard a preserved inventory instead of resuming it
	ff          fileFlags // -f: the mesh a manifest describes
	urls        []string  // --url: an existing NATS server or cluster
}

// check refuses flag values no mesh can run with.
func (f *upFlags) check() error {
	if f.json && !f.detach {
		return usagef("--json prints what up --detach started; a mesh in the foreground runs until it is stopped")
	}
	if f.sync != config.SyncAlways && f.sync != config.SyncInterval {
		return usagef("--sync %q: use always or interval", f.sync)
	}
	if err := checkReadiness(f.readiness); err != nil {
		return err
	}
	if err := checkExternal(f); err != nil {
		return err
	}
	return checkMaxSessions(f.maxSessions)
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

With --url nats://a,nats://b,... the mesh lives on a NATS server or cluster
you run (JetStream on) and no broker is started: streams get min(3, cluster
size) replicas. With auth, the servers must first trust the space: see
"cotal broker config".

If the space is already running, up says so and exits 0. Seats left in
their keepers are taken back; seats "down --preserve-state" preserved are
resumed (--fresh discards them, naming them).

With -f FILE, up applies a manifest (cotal.yaml) instead: it starts the
file's space in the background when none runs, then writes its registry,
mints its endpoints' credentials and spawns its seats; run again, it applies
only what changed ("cotal plan -f FILE" shows what that is first).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runUp(cmd.Context(), g, f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.detach, "detach", false, "run the mesh in the background and return once it is ready")
	fl.BoolVar(&f.open, "open", false, "run without authentication (anyone on this machine can read and post as anyone)")
	fl.StringVar(&f.sync, "sync", config.SyncAlways, "store durability: always (fsync before every ack) or interval (faster, can lose acked writes on a crash)")
	fl.BoolVar(&f.verbose, "verbose", false, "log the broker's notices too")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "with --detach: how long to wait for the mesh to be ready")
	fl.BoolVar(&f.json, "json", false, "with --detach: print the started (or running) mesh as JSON")
	fl.IntVar(&f.maxSessions, "max-sessions", attach.DefaultMaxSessions, "the most attach sessions the manager serves at once; more are refused, naming this flag")
	fl.DurationVar(&f.readiness, "readiness", 0, readinessHelp)
	fl.StringSliceVar(&f.urls, "url", nil, "run the mesh on an existing NATS server or cluster with JetStream (`nats://a,nats://b,...`), starting no broker; --creds names the credential it connects with")
	fl.BoolVar(&f.fresh, "fresh", false, "discard the seats `down --preserve-state` preserved (saying which) instead of resuming them")
	addUpFileFlags(cmd, &f.ff)
	return cmd
}

func runUp(ctx context.Context, g *globals, f *upFlags) error {
	if f.ff != (fileFlags{}) {
		return runUpFile(ctx, g, f)
	}
	if err := f.check(); err != nil {
		return err
	}
	data, p, _, err := g.paths()
	if err != nil {
		return err
	}
	if f.fresh {
		if err := discardPreserved(g); err != nil {
			return err
		}
	}
	if f.detach && os.Getenv(envDetachedChild) == "" {
		return upDetached(ctx, g, p, f)
	}
	h, err := host.Start(ctx, host.Config{Data: data, Paths: p, Open: f.open, Sync: f.sync, Log: g.stderr, Verbose: f.verbose, MaxSessions: f.maxSessions,
		Readiness: f.readiness, Servers: f.urls, Creds: externalCreds(g, f)})
	var running *host.AlreadyRunningError
	if errors.As(err, &running) {
		fmt.Fprintln(g.stdout, running.Error())
		return nil
	}
	if err != nil {
		return err
	}
	ctx, stop := untilQuit(ctx, hostQuit(g, h))
	defer stop()
	clirender.Up(g.stdout, p.Space, h.Broker().URL(), os.Getpid(), f.open, p.StoreDir, h.Broker().MaxStore())
	printExternal(g, h, f.open)
	if f.sync == config.SyncInterval {
		fmt.Fprintln(g.stdout, "WARNING: --sync interval: the store is fsynced every 2 minutes, so an OS crash or power loss can lose messages the mesh already acknowledged")
	}
	if m := h.Manager(); m != nil {
		clirender.Lines(g.stdout, m.CustodyReport().Lines())
	}
	if os.Getenv(envDetachedChild) == "" {
		fmt.Fprintln(g.stdout, "press Ctrl-C to stop")
	}
	err = h.Run(ctx)
	fmt.Fprintf(g.stdout, "mesh %s stopped\n", p.Space)
	return err
}

// upDetached runs `cotal up` as a background process and reports it once
// it is ready, or says the space already runs.
func upDetached(ctx context.Context, g *globals, p config.Paths, f *upFlags) error {
	args := []string{"up", "--space", p.Space, "--store-dir", p.StoreDir, "--sync", f.sync, "--max-sessions", strconv.Itoa(f.maxSessions), "--readiness", f.readiness.String()}
	if f.open {
		args = append(args, "--open")
	}
	if f.verbose {
		args = append(args, "--verbose")
	}
	args = append(args, externalArgs(g, f)...)
	start := time.Now()
	rec, err := host.Detach(ctx, host.DetachConfig{
		Paths: p, Args: args, Env: []string{envDetachedChild + "=1"}, Timeout: f.timeout,
		Slow: func(pid int) { fmt.Fprintf(g.stderr, "waiting for mesh %s to be ready (pid %d)...\n", p.Space, pid) },
	})
	var running *host.AlreadyRunningError
	var late *host.NotReadyError
	switch {
	case errors.As(err, &running) && f.json:
		return g.resultJSON(clirender.UpJSON{Space: p.Space, AlreadyRunning: true, PID: running.PID, URL: running.URL, Log: p.LogFile()})
	case errors.As(err, &running):
		fmt.Fprintln(g.stdout, running.Error())
		return nil
	case errors.As(err, &late):
		return fmt.Errorf("%w, stop it with `cotal down --space %s`", err, p.Space)
	case err != nil:
		return err
	}
	if f.json {
		return g.resultJSON(clirender.UpJSON{Space: p.Space, URL: rec.URL, PID: rec.PID, Mode: rec.Mode, Sync: rec.Sync,
			ReadyMs: time.Since(start).Milliseconds(), Store: p.StoreDir, Log: p.LogFile()})
	}
	clirender.Detached(g.stdout, p.Space, rec, time.Since(start))
	printExternalRecord(g, rec)
	clirender.DetachedTail(g.stdout, p.Space, rec, p.LogFile(), custodyLines(g))
	return nil
}

// custodyLines says, from the managers of a mesh started in the
// background, what its start made of the seats its keepers held.
func custodyLines(g *globals) []string {
	cl, nc, err := g.managers()
	if err != nil {
		return nil
	}
	defer nc.Close()
	ctx, cancel := ctxTimeout()
	defer cancel()
	cs, err := cl.Census(ctx, "")
	if err != nil {
		return nil
	}
	return seat.CustodyOf(cs.Rows).Lines()
}
