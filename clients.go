package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/seat/client"
)

// How a command reaches the mesh: an endpoint as --creds or the local
// operator (one-shot or not), a control-surface client, the managers'
// client, and one seat on them.

// oneShot runs fn with a one-shot endpoint (no presence, nothing consumed
// until asked) acting as --creds or the local operator.
func (g *globals) oneShot(fn func(ctx context.Context, e *mesh.Endpoint) error) error {
	return g.oneShotWith(mesh.Options{}, fn)
}

// endpoint connects a CLI command to the space's mesh as --creds, or as
// the local operator.
func (g *globals) endpoint(ctx context.Context, o mesh.Options) (*mesh.Endpoint, error) {
	t, err := g.resolveTarget()
	if err != nil {
		return nil, err
	}
	o.URL, o.Creds = t.URL, t.Creds
	if o.Creds == "" || g.space != "" {
		o.Space = t.Paths.Space
	}
	if o.Creds == "" && o.Name == "" {
		o.Name = issue.OperatorPrincipal().Actor
	}
	if o.Logf == nil {
		o.Logf = func(format string, args ...any) { fmt.Fprintf(g.stderr, "cotal: "+format+"\n", args...) }
	}
	return mesh.Connect(ctx, o)
}

// oneShotWith is oneShot with options of its own.
func (g *globals) oneShotWith(o mesh.Options, fn func(ctx context.Context, e *mesh.Endpoint) error) error {
	ctx, cancel := ctxTimeout()
	defer cancel()
	o.OneShot = true
	e, err := g.endpoint(ctx, o)
	if err != nil {
		return err
	}
	defer e.Close()
	return fn(ctx, e)
}

// epClient connects a CLI command to the control surface as --creds, or
// as the local operator; nothing here knows any endpoint's commands.
func (g *globals) epClient() (*ep.Client, *nats.Conn, error) {
	t, err := g.resolveTarget()
	if err != nil {
		return nil, nil, err
	}
	return t.ControlClient()
}

// epFailure prints a refusal the way a person reads it and says whether the command ran; it exits 1.
func epFailure(g *globals, err error) error {
	e := proto.AsError(err)
	if e == nil {
		return err
	}
	clirender.Refusal(g.stderr, e)
	return exitError{exitFail}
}

// managers is a client of the space's managers as this process's caller;
// closing nc ends it. An agent's credential gets an agent's client: it
// sends its census and finds seats on the roster, since it may not read
// the registry the operator's census freezes.
func (g *globals) managers() (*client.Client, *nats.Conn, error) {
	c, nc, err := g.epClient()
	if err != nil {
		return nil, nil, err
	}
	if !g.actsAsAgent() {
		return client.New(c), nc, nil
	}
	roster := func(ctx context.Context) ([]presence.Peer, error) {
		e, err := g.endpoint(ctx, mesh.Options{OneShot: true, Subscribe: []string{}})
		if err != nil {
			return nil, err
		}
		defer e.Close()
		peers, _, err := e.Roster(ctx)
		return peers, err
	}
	return client.New(c, client.AsAgent(roster)), nc, nil
}

// onSeat locates a seat over the managers (or only on) and makes one call
// on it; a name no manager has is a usage error.
func onSeat(g *globals, name, on string, call func(context.Context, *client.Client, client.Seat) error) error {
	cl, nc, err := g.managers()
	if err != nil {
		return err
	}
	defer nc.Close()
	row, err := locate(g, cl, name, on)
	if err != nil {
		return err
	}
	ctx, cancel := ctxTimeout()
	defer cancel()
	if err := call(ctx, cl, row.Seat()); err != nil {
		return epFailure(g, err)
	}
	return nil
}

// locate finds a seat over the managers (or only on): a name no manager
// has is a usage error, a refusal is said as epFailure says it.
func locate(g *globals, cl *client.Client, name, on string) (client.CensusRow, error) {
	ctx, cancel := ctxTimeout()
	defer cancel()
	row, err := cl.Locate(ctx, name, on)
	var none *client.NoSeatError
	if errors.As(err, &none) {
		return row, usage(err)
	}
	if err != nil {
		return row, epFailure(g, err)
	}
	return row, nil
}

// redialer is a manager client that dials again after the mesh went away.
func (g *globals) redialer() *client.Redialer {
	return client.NewRedialer(func() (*client.Client, error) {
		c, _, err := g.managers() // the redialer closes the connection through the client
		return c, err
	})
}
