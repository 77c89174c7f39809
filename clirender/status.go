package clirender

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/seat/sandbox"
)

// Status prints `cotal status`: whether the mesh is up and how it is
// doing and, where the jetstream line ends, which cluster the mesh lives
// on.
func Status(w io.Writer, r host.Status) {
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
	if r.Host != "" {
		say("  listens    on %s beyond loopback, TLS only; other machines dial %s", r.Host, strings.Join(r.RemoteURLs, " or "))
	}
	if r.TLSPin != "" {
		say("  tls pin    %s (--tls-pin for a client elsewhere)", r.TLSPin)
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
		cluster(say, r)
		leafStatus(say, r.Leaf)
		say("  delivery   %s", r.Delivery)
		managers(say, r)
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

// managers says which registered managers answered, one line each.
func managers(say func(string, ...any), r host.Status) {
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

// cluster says which cluster the mesh lives on, its meta leader and each
// stream's replicas, leader and lag; nothing for the embedded broker.
func cluster(say func(string, ...any), r host.Status) {
	c := r.Cluster
	if c == nil {
		return
	}
	name := c.Name
	if name == "" {
		name = "none (a single server)"
	}
	say("  cluster    %s, read from %s", name, c.Connected)
	switch {
	case c.MetaLeader != "" && c.MetaPeers > 0:
		say("  meta       leader %s of %d JetStream peers", c.MetaLeader, c.MetaPeers)
	case c.MetaLeader != "":
		say("  meta       leader %s", c.MetaLeader)
	default:
		say("  meta       leader unknown: %s", c.MetaError)
	}
	for _, s := range c.Streams {
		var behind []string
		for _, p := range s.Peers {
			switch {
			case p.Offline:
				behind = append(behind, p.Name+" OFFLINE")
			case !p.Current:
				behind = append(behind, fmt.Sprintf("%s %d behind", p.Name, p.Lag))
			}
		}
		state := "all current"
		if len(behind) > 0 {
			state = strings.Join(behind, ", ")
		}
		if s.Replicas == 1 {
			state = "no replicas"
		}
		say("             %-28s R%d leader %-6s lag %d (%s)", s.Name, s.Replicas, s.Leader, s.Lag, state)
	}
}
