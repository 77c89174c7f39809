package main

import (
	"fmt"
	"strings"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
)

// checkExternal refuses --url values no mesh can run on, and --sync
// interval with them: an external cluster's servers decide how they sync.
func checkExternal(f *upFlags) error {
	if len(f.urls) == 0 {
		return nil
	}
	if err := broker.CheckURLs(f.urls); err != nil {
		return usagef("--url: %v", err)
	}
	if f.sync != config.SyncAlways {
		return usagef("--sync %s applies to the embedded broker; with --url the cluster's servers decide how they sync (sync_interval in their jetstream block)", f.sync)
	}
	return nil
}

// externalCreds is the credential `up --url` connects with: --creds when
// the mesh lives on servers cotal did not start, else none.
func externalCreds(g *globals, f *upFlags) string {
	if len(f.urls) == 0 {
		return ""
	}
	return g.creds
}

// externalArgs passes --url and --creds on to the background `up`.
func externalArgs(g *globals, f *upFlags) []string {
	var args []string
	for _, u := range f.urls {
		args = append(args, "--url", u)
	}
	if c := externalCreds(g, f); c != "" {
		args = append(args, "--creds", c)
	}
	return args
}

// printExternal says which cluster a mesh on external servers lives on and,
// open, that anyone who reaches those servers can read and post as anyone.
func printExternal(g *globals, h interface{ External() string }, open bool) {
	s := h.External()
	if s == "" {
		return
	}
	fmt.Fprintln(g.stdout, s)
	if open {
		fmt.Fprintln(g.stdout, "OPEN on an external cluster: anyone who can reach those servers can read and post as anyone, on every machine")
	}
}

// printExternalRecord is printExternal for a mesh started in the
// background, from its broker.json.
func printExternalRecord(g *globals, rec config.BrokerRecord) {
	if !rec.External {
		return
	}
	fmt.Fprintf(g.stdout, "on external NATS servers %s (`cotal status` shows the cluster and each stream's replicas)\n", rec.URL)
	if rec.Mode == config.ModeOpen {
		fmt.Fprintln(g.stdout, "OPEN on an external cluster: anyone who can reach those servers can read and post as anyone, on every machine")
	}
}

// printCluster says which cluster the mesh lives on, its meta leader and
// each stream's replicas, leader and lag; nothing for the embedded broker.
func printCluster(say func(string, ...any), c *broker.Cluster) {
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
