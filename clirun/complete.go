package clirun

import (
	"context"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
)

// The names a shell completion offers: each lookup is quiet (the shell
// would show what it printed) and yields nothing when the mesh cannot be
// reached.

// SeatNames are the seats the managers' census lists.
func SeatNames(ctx context.Context, c Caller) []string {
	cl, nc, err := c.Managers()
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

// ChannelNames are the channels the registry lists and, for the
// operator, the channels with posts.
func ChannelNames(ctx context.Context, c Caller) []string {
	return onMesh(ctx, c, func(e *mesh.Endpoint) []string {
		rows, _, _ := e.ListChannels(ctx)
		var out []string
		for _, r := range rows {
			out = append(out, r.Channel)
		}
		return out
	})
}

// PeerNames are the names on the roster.
func PeerNames(ctx context.Context, c Caller) []string {
	return rosterNames(ctx, c, func(p presence.Peer) string { return p.Name })
}

// RoleNames are the roles on the roster.
func RoleNames(ctx context.Context, c Caller) []string {
	return rosterNames(ctx, c, func(p presence.Peer) string { return p.Role })
}

// SpaceNames are the spaces this machine knows.
func SpaceNames() []string {
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

// rosterNames is pick of every peer on the roster, the empty ones left out.
func rosterNames(ctx context.Context, c Caller, pick func(presence.Peer) string) []string {
	return onMesh(ctx, c, func(e *mesh.Endpoint) []string {
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

// onMesh is look on a one-shot endpoint that logs nothing.
func onMesh(ctx context.Context, c Caller, look func(*mesh.Endpoint) []string) []string {
	e, err := c.Endpoint(ctx, mesh.Options{OneShot: true, Subscribe: []string{}, Logf: func(string, ...any) {}})
	if err != nil {
		return nil
	}
	defer e.Close()
	return look(e)
}
