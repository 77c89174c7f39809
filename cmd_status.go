package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/sandbox"
)

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
			_, p, _, err := g.paths()
			if err != nil {
				return err
			}
			ctx, cancel := ctxTimeout()
			defer cancel()
			r := host.ReportStatus(ctx, host.StatusQuery{Paths: p, Server: g.server, Creds: g.creds,
				Managers: func(ctx context.Context) ([]client.ManagerStatus, error) {
					cl, nc, err := g.managers()
					if err != nil {
						return nil, err
					}
					defer nc.Close()
					ms, _, err := cl.Managers(ctx)
					return ms, err
				}})
			if asJSON {
				printJSON(g.stdout, statusJSON(g, r))
			} else {
				printStatus(g.stdout, r)
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

func printStatus(w io.Writer, r host.Status) {
	say := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	switch {
	case r.Up && r.Reachable:
		say("mesh %s: up (pid %d, started %s ago)", r.Space, r.PID, render.Age(time.Now(), r.Started))
	case r.Up && r.URL == "":
		say("mesh %s: UNREACHABLE (pid %d holds the store, but its broker.json does not say where)", r.Space, r.PID)
	case r.Up:
		say("mesh %s: UNREACHABLE (pid %d holds the store, but %s does not answer)", r.Space, r.PID, r.URL)
	case !r.Stopped.IsZero():
		say("mesh %s: down (stopped %s ago)", r.Space, render.Age(time.Now(), r.Stopped))
	case r.PID != 0:
		say("mesh %s: down (pid %d gone without stopping cleanly)", r.Space, r.PID)
	case r.BrokerFileError != "":
		say("mesh %s: down (nothing holds the store; its broker.json is damaged)", r.Space)
	default:
		say("mesh %s: down (never started here; `cotal up` starts it)", r.Space)
	}
	if r.URL != "" {
		say("  url        %s", r.URL)
	}
	if pr := r.Preserved; pr != nil {
		next := "the next up resumes them; up --fresh discards them"
		if !pr.Ready {
			next = "NOT READY (its down did not finish): the next up discards them"
		}
		say("  preserved  %d seat(s) %s ago: %s; %s", len(pr.Seats), render.Age(time.Now(), pr.Written), strings.Join(pr.Seats, ", "), next)
	}
	if r.BrokerFileError != "" {
		say("  broker.json DAMAGED: %s", r.BrokerFileError)
	}
	switch r.Mode {
	case config.ModeAuth:
		say("  mode       auth (per-agent credentials)")
	case config.ModeOpen:
		say("  mode       OPEN (no authentication)")
	}
	switch r.Sync {
	case config.SyncAlways:
		say("  sync       always (fsync before every ack)")
	case config.SyncInterval:
		say("  sync       interval (an OS crash can lose acknowledged messages)")
	}
	if r.Reachable {
		js := "enabled"
		if !r.JetStream {
			js = "OFF (durable delivery is down; full disk? restart the mesh)"
		}
		say("  jetstream  %s, %d streams", js, r.Streams)
		printCluster(say, r.Cluster)
		say("  delivery   %s", r.Delivery)
		printManagers(say, r)
	}
	switch s := r.SeatSandbox; s.Mode {
	case sandbox.Namespace:
		say("  seats      sandboxed (mount namespace + Landlock ABI %d)", sandbox.ABI())
	case sandbox.Landlock:
		say("  seats      sandboxed (Landlock ABI %d path rules; %s)", sandbox.ABI(), s.Reason)
	default:
		say("  seats      UNSANDBOXED: %s", s.Reason)
	}
	limit := ""
	if r.StoreLimit > 0 {
		limit = fmt.Sprintf(" of %s limit", render.Bytes(r.StoreLimit))
	}
	say("  store      %s on disk%s, %s", render.Bytes(r.StoreBytes), limit, r.StoreDir)
	if r.Error != "" {
		say("  error      %s", r.Error)
	}
}

// printManagers says which registered managers answered, one line each.
func printManagers(say func(string, ...any), r host.Status) {
	switch {
	case len(r.ManagerInstances) == 0 && r.ManagersError != "":
		say("  managers   unknown: %s", r.ManagersError)
		return
	case len(r.ManagerInstances) == 0:
		say("  managers   none registered (nothing can spawn seats)")
		return
	}
	say("  managers   %d of %d registered answered", r.Managers, len(r.ManagerInstances))
	for _, m := range r.ManagerInstances {
		switch {
		case m.Answered:
			say("             %s epoch %d: answered, %s (%d running)", m.InstanceID, m.Epoch, render.Plural(m.Seats, "seat"), m.Live)
		case m.Error != "":
			say("             %s: answered with an error: %s", m.InstanceID, m.Error)
		case m.Liveness == ep.Gone:
			say("             %s: registration is stale (nothing holds its rail); `cotal deregister-instance --instance %s` removes it", m.InstanceID, m.InstanceID)
		default:
			say("             %s: registered, no answer within the deadline", m.InstanceID)
		}
	}
	if r.ManagersError != "" {
		say("             (%s)", r.ManagersError)
	}
}
