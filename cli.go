package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
)

// globals are the flags every command shares, and the streams.
type globals struct {
	space, storeDir, creds, server string
	stdin                          io.Reader
	stdout, stderr                 io.Writer
	// resolved is the space this process resolved first; it keeps it
	// (clirun.Caller).
	resolved clirun.Resolved
}

// caller is who and where the command acts, as the flags say now: how a
// command reaches the mesh (clirun.Caller).
func (g *globals) caller() clirun.Caller {
	return clirun.Caller{Space: g.space, StoreDir: g.storeDir, Creds: g.creds, Server: g.server, Resolved: &g.resolved, AsAgent: g.actsAsAgent,
		Logf: func(format string, args ...any) { fmt.Fprintf(g.stderr, "cotal: "+format+"\n", args...) }}
}

// The caller's calls, for the commands: the space and its paths, the mesh
// to talk to, the managers, and whether this process is a seat's.
func (g *globals) paths() (string, config.Paths, config.Resolution, error) { return g.caller().Paths() }
func (g *globals) managers() (*client.Client, *nats.Conn, error)           { return g.caller().Managers() }
func (g *globals) inSeat() string                                          { return g.caller().InSeat() }
func ctxTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), clirun.Timeout)
}
func usagef(format string, a ...any) error { return cliargs.Usagef(format, a...) }
func usage(err error) error                { return cliargs.UsageError{Err: err} }
func printJSON(w io.Writer, v any)         { clirender.JSON(w, v) }
func (g *globals) resultJSON(v any) error  { printJSON(g.stdout, v); return nil }

// exitError carries an exit code without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// onSeat locates a seat over the managers (or only on) and makes one call
// on it; a name no manager has is a usage error.
func onSeat(g *globals, name, on string, call func(context.Context, *client.Client, client.Seat) error) error {
	return clirun.Refused(g.caller().OnSeat(name, on, call))
}

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

// withJSON gives cmd the --json flag every result command has, into asJSON.
func withJSON(cmd *cobra.Command, asJSON *bool, usage string) *cobra.Command {
	cmd.Flags().BoolVar(asJSON, "json", false, usage)
	return cmd
}
