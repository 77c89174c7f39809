package main

import (
	"context"
	"fmt"
	"io"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/client"
)

// globals are the flags every command shares, and the streams.
type globals struct {
	space    string
	storeDir string
	creds    string
	server   string
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
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
// to talk to, an endpoint, the control surface, the
// managers, one seat on them, and whether this process is a seat's.
func (g *globals) paths() (string, config.Paths, config.Resolution, error) { return g.caller().Paths() }
func (g *globals) resolveTarget() (host.Target, error)                     { return g.caller().Target() }
func (g *globals) endpoint(ctx context.Context, o mesh.Options) (*mesh.Endpoint, error) {
	return g.caller().Endpoint(ctx, o)
}
func (g *globals) epClient() (*ep.Client, *nats.Conn, error)     { return g.caller().Control() }
func (g *globals) managers() (*client.Client, *nats.Conn, error) { return g.caller().Managers() }
func (g *globals) redialer() *client.Redialer                    { return g.caller().Redialer() }
func (g *globals) inSeat() string                                { return g.caller().InSeat() }
func ctxTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), clirun.Timeout)
}
func usagef(format string, a ...any) error { return cliargs.Usagef(format, a...) }
func usage(err error) error                { return cliargs.UsageError{Err: err} }
func printJSON(w io.Writer, v any)         { clirender.JSON(w, v) }
func (g *globals) resultJSON(v any) error  { printJSON(g.stdout, v); return nil }
func orDefault(s, otherwise string) string { return clirender.OrDefault(s, otherwise) }
func ageMs(nowMs, t int64) string          { return clirender.AgeMs(nowMs, t) }

// exitError carries an exit code without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// epFailure prints a refusal the way a person reads it and says whether
// the command ran; it exits 1.
func epFailure(g *globals, err error) error {
	e := proto.AsError(err)
	if e == nil {
		return err
	}
	clirender.Refusal(g.stderr, e)
	return exitError{exitFail}
}

// onSeat locates a seat over the managers (or only on) and makes one call
// on it; a name no manager has is a usage error.
func onSeat(g *globals, name, on string, call func(context.Context, *client.Client, client.Seat) error) error {
	return epFailure(g, g.caller().OnSeat(name, on, call))
}

// locate finds a seat over the managers (or only on): a name no manager
// has is a usage error, a refusal is said as epFailure says it.
func locate(g *globals, cl *client.Client, name, on string) (client.CensusRow, error) {
	row, err := clirun.Locate(cl, name, on)
	return row, epFailure(g, err)
}
