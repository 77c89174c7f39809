package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/seat"
)

// completeTimeout bounds one completion's look at the mesh: a shell waits
// for it on every Tab, so a mesh that is down or slow yields nothing, fast.
const completeTimeout = time.Second

// addCompletions teaches `cotal completion`'s scripts the names each
// argument and flag takes: seats (the managers' census), personas (the
// project's agent files), channels (the registry and, for the operator,
// the channels with posts), peers and roles (the roster), spaces (this
// machine's). A lookup runs with the flags of the line being completed.
func addCompletions(root *cobra.Command, g *globals) {
	names := func(lookup func(context.Context, clirun.Caller) []string) cobra.CompletionFunc {
		return cliargs.Names(completeTimeout, func(ctx context.Context) []string { return lookup(ctx, g.caller()) })
	}
	seats, channels := names(clirun.SeatNames), names(clirun.ChannelNames)
	peers, roles := names(clirun.PeerNames), names(clirun.RoleNames)
	personas := names(func(context.Context, clirun.Caller) []string { return seat.ListPersonas(personaDir()) })
	spaces := names(func(context.Context, clirun.Caller) []string { return clirun.SpaceNames() })
	cliargs.Complete(root, map[string]cobra.CompletionFunc{
		"send msg": channels, "send dm": peers, "send ask": roles, "send msg --mention": peers,
		"history": channels, "channels set": channels, "leave": channels, "join --channel": channels,
		"spawn": personas, "mint": personas, "use": spaces, "--space": spaces,
		"mint --subscribe": channels, "mint --allow-subscribe": channels, "mint --allow-publish": channels,
		"screen": seats, "stop": seats, "input": seats,
	})
}
