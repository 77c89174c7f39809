package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/sandbox"
)

// statusReport is `cotal status --json`.
type statusReport struct {
	Space      string    `json:"space"`
	Up         bool      `json:"up"`
	Reachable  bool      `json:"reachable"`
	URL        string    `json:"url,omitempty"`
	PID        int       `json:"pid,omitempty"`
	Mode       string    `json:"mode,omitempty"`
	Sync       string    `json:"sync,omitempty"`
	Started    time.Time `json:"started,omitzero"`
	Stopped    time.Time `json:"stopped,omitzero"`
	JetStream  bool      `json:"jetstream"`
	StoreBytes int64     `json:"storeBytes"`     // on disk under the JetStream dir
	DataBytes  int64     `json:"jetstreamBytes"` // what JetStream accounts as stored
	StoreLimit int64     `json:"storeLimit,omitempty"`
	StoreDir   string    `json:"storeDir"`
	Streams    int       `json:"streams,omitempty"`
	// Delivery says whether the durable delivery service holds its lease
	// and serves (an open mesh has none). Managers counts the manager
	// instances that answered a status scatter (the probe ps uses);
	// ManagerInstances says of every registered one whether it answered.
	Delivery         string                 `json:"delivery,omitempty"`
	Managers         int                    `json:"managers"`
	ManagerInstances []client.ManagerStatus `json:"managerInstances"`
	ManagersError    string                 `json:"managersError,omitempty"`
	// SeatSandbox is how a seat started on this machine would be kept
	// from the store's keys and creds, found by launching a probe.
	SeatSandbox sandbox.Report `json:"seatSandbox"`
	// BrokerFileError names the damage of a broker.json that cannot be
	// read; the store lock still says whether the mesh runs.
	BrokerFileError string `json:"brokerFileError,omitempty"`
	Error           string `json:"error,omitempty"`
}

func newStatusCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Say whether the space's mesh is up, and how it is doing",
		Long: `Report whether the space's mesh is up: its url, auth mode, sync mode,
whether JetStream is enabled and how much of the store limit is used, and
which registered manager instances answer (asked all at once, as ps asks; a
silent one is named, with whether its registration is stale).

Exits 0 when the mesh is up and answering, 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if _, _, _, err := g.paths(); err != nil {
				return err
			}
			r := gatherStatus(g)
			if asJSON {
				b, _ := json.MarshalIndent(r, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
			} else {
				printStatus(g, r)
			}
			if !r.Up || !r.Reachable {
				return exitError{exitFail}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func gatherStatus(g *globals) statusReport {
	_, p, _, err := g.paths()
	if err != nil {
		return statusReport{Error: err.Error()}
	}
	r := statusReport{Space: p.Space, StoreDir: p.StoreDir, SeatSandbox: probeSandbox(p)}
	r.StoreBytes, _ = broker.DirSize(p.JetStreamDir())
	// The store lock says whether the mesh runs; broker.json only how to
	// reach it, and it is never trusted to say that the mesh is down.
	s, err := host.Probe(p)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if s.RecordErr != nil && !errors.Is(s.RecordErr, fs.ErrNotExist) {
		r.BrokerFileError = s.RecordErr.Error()
	}
	_, serr := s.Serving()
	if rec := s.Record; s.RecordErr == nil && (!s.Running || serr == nil) {
		r.URL, r.PID, r.Mode, r.Sync, r.Started, r.Stopped, r.StoreLimit = rec.URL, rec.PID, rec.Mode, rec.Sync, rec.Started, rec.Stopped, rec.MaxStore
	}
	r.Up = s.Running
	meshPID := 0 // the live process holding this store, when there is one
	if s.Running {
		r.PID, meshPID = s.PID, s.PID
		if serr != nil && g.server == "" {
			r.Error = serr.Error()
			return r
		}
	}
	if !r.Up && g.server == "" {
		return r
	}
	t, err := g.resolveTarget()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	nc, err := t.connect("cotal status")
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer nc.Close()
	r.Reachable, r.Up, r.URL = true, true, t.url
	js, err := jetstream.New(nc)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	ctx, cancel := ctxTimeout()
	defer cancel()
	info, err := js.AccountInfo(ctx)
	if err != nil {
		r.Error = "JetStream: " + err.Error()
		return r
	}
	r.JetStream = true
	r.DataBytes = int64(info.Store)
	r.Streams = info.Streams
	r.Delivery = deliveryState(ctx, js, r.Space, r.Mode, meshPID)
	r.ManagerInstances, r.ManagersError = managerStatuses(g)
	for _, m := range r.ManagerInstances {
		if m.Answered {
			r.Managers++
		}
	}
	return r
}

// managerStatuses scatters status over the registered managers: which
// answered, and what the probe says of the silent ones.
func managerStatuses(g *globals) ([]client.ManagerStatus, string) {
	cl, nc, err := g.managers()
	if err != nil {
		return []client.ManagerStatus{}, err.Error()
	}
	defer nc.Close()
	ctx, cancel := ctxTimeout()
	defer cancel()
	ms, _, err := cl.Managers(ctx)
	if ms == nil {
		ms = []client.ManagerStatus{}
	}
	if err != nil {
		return ms, err.Error()
	}
	return ms, ""
}

// deliveryState reads the delivery service's lease: serving, starting, or
// absent (none in open mode). A lease whose holder is a process of this
// machine that is gone, or that is not the mesh holding the store
// (meshPID, 0 when unknown), is a dead holder's: never reported as serving.
func deliveryState(ctx context.Context, js jetstream.JetStream, space, mode string, meshPID int) string {
	if mode == config.ModeOpen {
		return "none (open mode: live only)"
	}
	kv, err := js.KeyValue(ctx, wire.DeliveryBucket(space))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	e, err := kv.Get(ctx, delivery.LeaseKey)
	if err != nil {
		return "NOT SERVING (no lease: durable channels are live only)"
	}
	var l struct {
		Holder string `json:"holder"`
		Ready  bool   `json:"ready"`
	}
	if json.Unmarshal(e.Value(), &l) != nil {
		return "starting"
	}
	if !leaseHolderAlive(l.Holder, meshPID) {
		return "NOT SERVING (the lease is held by " + l.Holder + ", a process that is gone; durable channels wait until a mesh takes it over)"
	}
	if !l.Ready {
		return "starting"
	}
	return "serving (" + l.Holder + ")"
}

// probeSandbox launches a probe as a seat of this space would be launched.
func probeSandbox(p config.Paths) sandbox.Report {
	exe, err := os.Executable()
	if err != nil {
		return sandbox.Report{Mode: sandbox.None, Reason: "cannot find the cotal executable, the seat launcher: " + err.Error()}
	}
	return sandbox.Probe(exe, append(host.SeatProtect(p), filepath.Dir(seat.LaunchDir(issue.RunDir(p), "x", "x"))))
}

// describeSandbox says in a line how seats here are sandboxed.
func describeSandbox(r sandbox.Report) string {
	switch r.Mode {
	case sandbox.Namespace:
		return fmt.Sprintf("sandboxed (mount namespace + Landlock ABI %d)", sandbox.ABI())
	case sandbox.Landlock:
		return fmt.Sprintf("sandboxed (Landlock ABI %d path rules; %s)", sandbox.ABI(), r.Reason)
	}
	return "UNSANDBOXED: " + r.Reason
}

// leaseHolderAlive judges a lease holder named host/pid: on another host
// it cannot be checked and counts as alive; on this one its process must
// run and, when the store's mesh is known, be that mesh.
func leaseHolderAlive(holder string, meshPID int) bool {
	host, pidText, ok := strings.Cut(holder, "/")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil {
		return true
	}
	if me, _ := os.Hostname(); host != me {
		return true
	}
	if meshPID > 0 && pid != meshPID {
		return false
	}
	return broker.PIDAlive(pid)
}

// printManagers says which registered managers answered, one line each.
func printManagers(w io.Writer, r statusReport) {
	switch {
	case len(r.ManagerInstances) == 0 && r.ManagersError != "":
		fmt.Fprintf(w, "  managers   unknown: %s\n", r.ManagersError)
		return
	case len(r.ManagerInstances) == 0:
		fmt.Fprintln(w, "  managers   none registered (nothing can spawn seats)")
		return
	}
	fmt.Fprintf(w, "  managers   %d of %d registered answered\n", r.Managers, len(r.ManagerInstances))
	for _, m := range r.ManagerInstances {
		switch {
		case m.Answered:
			fmt.Fprintf(w, "             %s epoch %d: answered, %s (%d running)\n", m.InstanceID, m.Epoch, render.Plural(m.Seats, "seat"), m.Live)
		case m.Error != "":
			fmt.Fprintf(w, "             %s: answered with an error: %s\n", m.InstanceID, m.Error)
		case m.Liveness == ep.Gone:
			fmt.Fprintf(w, "             %s: registration is stale (nothing holds its rail); `cotal deregister-instance --instance %s` removes it\n", m.InstanceID, m.InstanceID)
		default:
			fmt.Fprintf(w, "             %s: registered, no answer within the deadline\n", m.InstanceID)
		}
	}
	if r.ManagersError != "" {
		fmt.Fprintf(w, "             (%s)\n", r.ManagersError)
	}
}

func printStatus(g *globals, r statusReport) {
	w := g.stdout
	switch {
	case r.Space == "":
		fmt.Fprintln(w, "status unknown:", r.Error)
		return
	case r.Up && r.Reachable:
		fmt.Fprintf(w, "mesh %s: up (pid %d, started %s ago)\n", r.Space, r.PID, render.Age(time.Now(), r.Started))
	case r.Up && r.URL == "":
		fmt.Fprintf(w, "mesh %s: UNREACHABLE (pid %d holds the store, but its broker.json does not say where)\n", r.Space, r.PID)
	case r.Up:
		fmt.Fprintf(w, "mesh %s: UNREACHABLE (pid %d holds the store, but %s does not answer)\n", r.Space, r.PID, r.URL)
	case !r.Stopped.IsZero():
		fmt.Fprintf(w, "mesh %s: down (stopped %s ago)\n", r.Space, render.Age(time.Now(), r.Stopped))
	case r.PID != 0:
		fmt.Fprintf(w, "mesh %s: down (pid %d gone without stopping cleanly)\n", r.Space, r.PID)
	case r.BrokerFileError != "":
		fmt.Fprintf(w, "mesh %s: down (nothing holds the store; its broker.json is damaged)\n", r.Space)
	default:
		fmt.Fprintf(w, "mesh %s: down (never started here; `cotal up` starts it)\n", r.Space)
	}
	if r.URL != "" {
		fmt.Fprintf(w, "  url        %s\n", r.URL)
	}
	if r.BrokerFileError != "" {
		fmt.Fprintf(w, "  broker.json DAMAGED: %s\n", r.BrokerFileError)
	}
	switch r.Mode {
	case config.ModeAuth:
		fmt.Fprintln(w, "  mode       auth (per-agent credentials)")
	case config.ModeOpen:
		fmt.Fprintln(w, "  mode       OPEN (no authentication)")
	}
	switch r.Sync {
	case config.SyncAlways:
		fmt.Fprintln(w, "  sync       always (fsync before every ack)")
	case config.SyncInterval:
		fmt.Fprintln(w, "  sync       interval (an OS crash can lose acknowledged messages)")
	}
	if r.Reachable {
		js := "enabled"
		if !r.JetStream {
			js = "OFF (durable delivery is down; full disk? restart the mesh)"
		}
		fmt.Fprintf(w, "  jetstream  %s, %d streams\n", js, r.Streams)
		fmt.Fprintf(w, "  delivery   %s\n", r.Delivery)
		printManagers(w, r)
	}
	fmt.Fprintf(w, "  seats      %s\n", describeSandbox(r.SeatSandbox))
	limit := ""
	if r.StoreLimit > 0 {
		limit = fmt.Sprintf(" of %s limit", render.Bytes(r.StoreLimit))
	}
	fmt.Fprintf(w, "  store      %s on disk%s, %s\n", render.Bytes(r.StoreBytes), limit, r.StoreDir)
	if r.Error != "" {
		fmt.Fprintf(w, "  error      %s\n", r.Error)
	}
}
