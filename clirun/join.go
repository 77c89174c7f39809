package clirun

import (
	"context"
	"errors"
	"io"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/tui/line"
)

// Joining is a person on the mesh from a plain terminal.
type Joining struct {
	Name, Role string
	Channels   []string // the first is where plain lines go
}

// Join puts a person on the mesh from a terminal (tui/line) until ctx
// ends or the mesh goes. Without --creds, on an authenticated mesh, the
// name gets a credential of its own (issue.MintPerson) with read and post
// rights on every channel. A bad name or channel is bad input.
func Join(ctx context.Context, c Caller, j Joining, in io.Reader, out, errw io.Writer) error {
	if c.Creds == "" && !wire.ValidToken(j.Name) {
		return usagef("--name %q must be one token of A-Z a-z 0-9 _ (no . * > - or spaces)", j.Name)
	}
	for _, ch := range j.Channels {
		if err := wire.ValidateChannel(ch); err != nil {
			return bad(err)
		}
	}
	opts := mesh.Options{Role: j.Role, Subscribe: j.Channels, Name: j.Name}
	if c.Creds == "" {
		// On an authenticated mesh the person gets a credential of their
		// own; an open one needs none.
		t, err := c.Target()
		if err != nil {
			return err
		}
		if t.Record.Mode != config.ModeOpen {
			nc, err := t.Connect("cotal join")
			if err != nil {
				return err
			}
			c.Creds, err = issue.MintPerson(ctx, t.Paths, nc, j.Name, j.Role, j.Channels)
			nc.Close()
			if errors.Is(err, issue.ErrReservedName) {
				return bad(err)
			}
			if err != nil {
				return err
			}
		}
	}
	if c.Creds != "" {
		opts.Name = ""
	}
	log := line.NewHeldLog(errw)
	opts.Logf = log.Logf
	e, err := c.Endpoint(ctx, opts)
	if err != nil {
		return err
	}
	defer e.Close()
	log.Watch(func() bool { return e.Conn().Status() == nats.CONNECTED })
	_, p, _, _ := c.Paths()
	err = line.Run(ctx, e, in, out, host.WatchLost(ctx, p, c.Server, e.Conn()))
	if errors.As(err, new(line.MeshLostError)) {
		// What the endpoint says while it lets go of a mesh that is gone
		// is noise: the person was told in words.
		log.Drop()
		e.Conn().Close()
	}
	return err
}
