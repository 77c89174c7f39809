package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

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
	json        bool
}

// check refuses flag values no mesh can run with.
func (f *upFlags) check() error {
	if f.json && !f.detach {
		return usagef("--json prints what up --detach started; a mesh in the foreground runs until it is stopped")
	}
	if f.sync != config.SyncAlways && f.sync != config.SyncInterval {
		return usagef("--sync %q: use always or interval", f.sync)
	}
	return checkMaxSessions(f.maxSessions)
}

func checkMaxSessions(n int) error {
	if n < 1 {
		return usagef("--max-sessions %d: the manager needs room for at least 1 attach session", n)
	}
	return nil
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
	fl.BoolVar(&f.json, "json", false, "with --detach: print the started (or running) mesh as JSON")
	fl.IntVar(&f.maxSessions, "max-sessions", attach.DefaultMaxSessions, "the most attach sessions the manager serves at once; more are refused, naming this flag")
	return cmd
}

func runUp(ctx context.Context, g *globals, f *upFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	data, p, _, err := g.paths()
	if err != nil {
		return err
	}
	if f.detach && os.Getenv(envDetachedChild) == "" {
		return upDetached(ctx, g, p, f)
	}
	h, err := host.Start(ctx, host.Config{Data: data, Paths: p, Open: f.open, Sync: f.sync, Log: g.stderr, Verbose: f.verbose, MaxSessions: f.maxSessions})
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
	b := h.Broker()
	mode := "auth mode: per-agent credentials"
	if f.open {
		mode = "OPEN mode: no authentication, owner local; anyone on this machine can read and post as anyone"
	}
	fmt.Fprintf(g.stdout, "mesh %s up on %s (pid %d, %s)\n", p.Space, b.URL(), os.Getpid(), mode)
	fmt.Fprintf(g.stdout, "store %s (limit %s)\n", p.StoreDir, humanBytes(b.MaxStore()))
	if f.sync == config.SyncInterval {
		fmt.Fprintln(g.stdout, "WARNING: --sync interval: the store is fsynced every 2 minutes, so an OS crash or power loss can lose messages the mesh already acknowledged")
	}
	if m := h.Manager(); m != nil {
		printCustody(g, m.CustodyReport())
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
	args := []string{"up", "--space", p.Space, "--store-dir", p.StoreDir, "--sync", f.sync, "--max-sessions", strconv.Itoa(f.maxSessions)}
	if f.open {
		args = append(args, "--open")
	}
	if f.verbose {
		args = append(args, "--verbose")
	}
	start := time.Now()
	rec, err := host.Detach(ctx, host.DetachConfig{
		Paths: p, Args: args, Env: []string{envDetachedChild + "=1"}, Timeout: f.timeout,
		Slow: func(pid int) { fmt.Fprintf(g.stderr, "waiting for mesh %s to be ready (pid %d)...\n", p.Space, pid) },
	})
	var running *host.AlreadyRunningError
	var late *host.NotReadyError
	switch {
	case errors.As(err, &running) && f.json:
		return g.resultJSON(upJSON{Space: p.Space, AlreadyRunning: true, PID: running.PID, URL: running.URL, Log: p.LogFile()})
	case errors.As(err, &running):
		fmt.Fprintln(g.stdout, running.Error())
		return nil
	case errors.As(err, &late):
		return fmt.Errorf("%w, stop it with `cotal down --space %s`", err, p.Space)
	case err != nil:
		return err
	}
	if f.json {
		return g.resultJSON(upJSON{Space: p.Space, URL: rec.URL, PID: rec.PID, Mode: rec.Mode, Sync: rec.Sync,
			ReadyMs: time.Since(start).Milliseconds(), Store: p.StoreDir, Log: p.LogFile()})
	}
	fmt.Fprintf(g.stdout, "mesh %s up on %s (pid %d, %s mode, sync %s) in %s\n", p.Space, rec.URL, rec.PID, rec.Mode, rec.Sync, time.Since(start).Round(time.Millisecond))
	if rec.Mode == config.ModeOpen {
		fmt.Fprintln(g.stdout, "OPEN mode: no authentication; anyone on this machine can read and post as anyone")
	}
	if rec.Sync == config.SyncInterval {
		fmt.Fprintln(g.stdout, "WARNING: --sync interval: an OS crash or power loss can lose messages the mesh already acknowledged")
	}
	if c, ok := custodyOf(g); ok {
		printCustody(g, c)
	}
	fmt.Fprintf(g.stdout, "log %s; stop it with `cotal down --space %s`\n", p.LogFile(), p.Space)
	return nil
}

// printCustody says what the start made of the seats left in their
// keepers by the mesh before: taken back, lost (and when), ended.
func printCustody(g *globals, c seat.Custody) {
	if len(c.Reattached) > 0 {
		fmt.Fprintf(g.stdout, "took back %d seat(s) from their keepers: %s\n", len(c.Reattached), strings.Join(c.Reattached, ", "))
	}
	for _, l := range c.Lost {
		fmt.Fprintf(g.stdout, "seat %s was lost (%s): %s\n", l.Name, l.At.Local().Format("2006-01-02 15:04:05"), l.Why)
	}
	for _, e := range c.Ended {
		fmt.Fprintf(g.stdout, "seat %s ended while no mesh ran (%s, %s)\n", e.Name, e.Why, e.At.Local().Format("2006-01-02 15:04:05"))
	}
}

// custodyOf asks the running mesh's managers what became of the seats in
// custody, for an up that started the mesh in the background.
func custodyOf(g *globals) (seat.Custody, bool) {
	var c seat.Custody
	cl, nc, err := g.managers()
	if err != nil {
		return c, false
	}
	defer nc.Close()
	ctx, cancel := ctxTimeout()
	defer cancel()
	cs, err := cl.Census(ctx, "")
	if err != nil {
		return c, false
	}
	for _, r := range cs.Rows {
		switch {
		case r.LostMs != 0:
			c.Lost = append(c.Lost, seat.LostSeat{Name: r.Name, At: time.UnixMilli(r.LostMs), Why: r.Lost})
		case r.EndedAway:
			c.Ended = append(c.Ended, seat.LostSeat{Name: r.Name, At: time.UnixMilli(r.ExitedMs), Why: r.Process})
		case r.ReattachedMs != 0:
			c.Reattached = append(c.Reattached, r.Name)
		}
	}
	return c, true
}

// upJSON is `cotal up --detach --json`.
type upJSON struct {
	Space          string `json:"space"`
	AlreadyRunning bool   `json:"alreadyRunning,omitempty"`
	URL            string `json:"url,omitempty"`
	PID            int    `json:"pid,omitempty"`
	Mode           string `json:"mode,omitempty"`
	Sync           string `json:"sync,omitempty"`
	ReadyMs        int64  `json:"readyMs,omitempty"` // how long the start took
	Store          string `json:"store,omitempty"`
	Log            string `json:"log"`
}
