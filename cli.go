package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/launch"
	"github.com/cotal-go/cotal/seat"
)

// globals are the flags every command shares, and the streams.
type globals struct {
	space, storeDir, creds, server string
	tls                            config.TLSTrust // --tls-pin, --tls-ca
	stdin                          io.Reader
	stdout, stderr                 io.Writer
	// resolved is the space this process resolved first; it keeps it
	// (clirun.Caller).
	resolved clirun.Resolved
}

// caller is who and where the command acts, as the flags say now: how a
// command reaches the mesh (clirun.Caller).
func (g *globals) caller() clirun.Caller {
	return clirun.Caller{Space: g.space, StoreDir: g.storeDir, Creds: g.creds, Server: g.server, TLS: g.tls, Resolved: &g.resolved, AsAgent: g.actsAsAgent,
		Logf: func(format string, args ...any) { fmt.Fprintf(g.stderr, "cotal: "+format+"\n", args...) }}
}

// resultJSON prints a command's result as JSON.
func (g *globals) resultJSON(v any) error { clirender.JSON(g.stdout, v); return nil }

// exitError carries an exit code without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// shown has print say a command's result when its call did not fail, and
// returns the call's error.
func shown(err error, print func()) error {
	if err == nil {
		print()
	}
	return err
}

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
	personas := names(func(context.Context, clirun.Caller) []string { return seat.ListPersonas(launch.PersonaDir()) })
	spaces := names(func(context.Context, clirun.Caller) []string { return clirun.SpaceNames() })
	cliargs.Complete(root, map[string]cobra.CompletionFunc{
		"send msg": channels, "send dm": peers, "send ask": roles, "send msg --mention": peers,
		"history": channels, "channels set": channels, "leave": channels, "join --channel": channels,
		"spawn": personas, "mint": personas, "use": spaces, "--space": spaces,
		"mint --subscribe": channels, "mint --allow-subscribe": channels, "mint --allow-publish": channels,
		"screen": seats, "stop": seats, "input": seats,
	})
}

// withJSON gives cmd the --json flag every result command has, into asJSON.
func withJSON(cmd *cobra.Command, asJSON *bool, usage string) *cobra.Command {
	cmd.Flags().BoolVar(asJSON, "json", false, usage)
	return cmd
}
