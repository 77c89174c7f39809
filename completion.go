package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/seat"
)

// completeTimeout bounds one completion's look at the mesh: a shell waits
// for it on every Tab, so a mesh that is down or slow yields nothing, fast.
const completeTimeout = time.Second

// addCompletions teaches `cotal completion`'s scripts the names each
// argument and flag takes: seats (the managers' census), personas (the
// project's agent files), channels (the registry and, for the operator,
// the channels with posts), peers and roles (the roster), spaces (this
// machine's).
func addCompletions(root *cobra.Command, g *globals) {
	seats := names(g, seatNames)
	personas := names(g, func(context.Context, *globals) []string { return seat.ListPersonas(personaDir()) })
	channels := names(g, channelNames)
	peers := names(g, rosterNames(func(p presence.Peer) string { return p.Name }))
	roles := names(g, rosterNames(func(p presence.Peer) string { return p.Role }))
	spaces := names(g, func(context.Context, *globals) []string { return spaceNames() })

	args := map[string]cobra.CompletionFunc{
		"send msg": channels, "send dm": peers, "send ask": roles,
		"history": channels, "channels set": channels, "leave": channels,
		"spawn": personas, "mint": personas, "use": spaces,
		"screen": seats, "stop": seats, "input": seats,
	}
	for path, fn := range args {
		if c, _, err := root.Find(strings.Fields(path)); err == nil && c != root {
			c.ValidArgsFunction = cliargs.FirstArg(fn)
		}
	}
	flags := []struct {
		path, flag string
		fn         cobra.CompletionFunc
	}{
		{"send msg", "mention", peers},
		{"join", "channel", channels},
		{"mint", "subscribe", channels},
		{"mint", "allow-subscribe", channels},
		{"mint", "allow-publish", channels},
		{"", "space", spaces},
	}
	for _, f := range flags {
		c := root
		if f.path != "" {
			c, _, _ = root.Find(strings.Fields(f.path))
		}
		_ = c.RegisterFlagCompletionFunc(f.flag, f.fn)
	}
}

// names makes a completion function of a lookup (cliargs.Names): it runs
// with the flags of the command line being completed.
func names(g *globals, lookup func(context.Context, *globals) []string) cobra.CompletionFunc {
	return cliargs.Names(completeTimeout, func(ctx context.Context) []string { return lookup(ctx, g) })
}

// onMesh is a lookup on the mesh through a one-shot endpoint that logs
// nothing (the shell would show it); nothing when the mesh cannot be
// reached.
func onMesh(look func(context.Context, *mesh.Endpoint) []string) func(context.Context, *globals) []string {
	return func(ctx context.Context, g *globals) []string {
		e, err := g.endpoint(ctx, mesh.Options{OneShot: true, Subscribe: []string{}, Logf: func(string, ...any) {}})
		if err != nil {
			return nil
		}
		defer e.Close()
		return look(ctx, e)
	}
}

func seatNames(ctx context.Context, g *globals) []string {
	cl, nc, err := g.managers()
	if err != nil {
		return nil
	}
	defer nc.Close()
	cs, err := cl.Census(ctx, "")
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range cs.Rows {
		out = append(out, r.Name)
	}
	return out
}

var channelNames = onMesh(func(ctx context.Context, e *mesh.Endpoint) []string {
	rows, _, _ := e.ListChannels(ctx)
	var out []string
	for _, r := range rows {
		out = append(out, r.Channel)
	}
	return out
})

// rosterNames is pick of every peer on the roster, the empty ones left out.
func rosterNames(pick func(presence.Peer) string) func(context.Context, *globals) []string {
	return onMesh(func(ctx context.Context, e *mesh.Endpoint) []string {
		peers, _, _ := e.Roster(ctx)
		var out []string
		for _, p := range peers {
			if n := pick(p); n != "" {
				out = append(out, n)
			}
		}
		return out
	})
}

func spaceNames() []string {
	data, err := config.DataDir()
	if err != nil {
		return nil
	}
	spaces, _ := config.KnownSpaces(data)
	var out []string
	for _, p := range spaces {
		out = append(out, p.Space)
	}
	return out
}
