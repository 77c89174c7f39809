package main

import (
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/tui/line"
)

func newJoinCmd(g *globals) *cobra.Command {
	var name, role string
	var channels []string
	cmd := &cobra.Command{
		Use:   "join --name N [--role R] [--channel C]...",
		Short: "Be on the mesh from this terminal: arrivals print as they come, typed lines are sent",
		Long: `Join the mesh as a person at a terminal. Arrivals (DMs, tasks for your
role, posts on your channels) print as they come and are acknowledged once
printed. Typed lines are sent.

In the default mode the name gets its own credential, minted for it with read
and post rights on every channel (or use --creds). It shows on the roster
until you leave.

` + line.Help,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.inSeat() != "" {
				return seatJoin(g, channels)
			}
			if g.creds == "" && !wire.ValidToken(name) {
				return usagef("--name %q must be one token of A-Z a-z 0-9 _ (no . * > - or spaces)", name)
			}
			for _, ch := range channels {
				if err := wire.ValidateChannel(ch); err != nil {
					return usage(err)
				}
			}
			ctx, stop := untilQuit(cmd.Context(), nil)
			defer stop()
			opts := mesh.Options{Role: role, Subscribe: channels, Name: name}
			if g.creds == "" {
				// On an authenticated mesh the person gets a credential
				// of their own; an open one needs none.
				t, err := g.resolveTarget()
				if err != nil {
					return err
				}
				if t.Record.Mode != config.ModeOpen {
					nc, err := t.Connect("cotal join")
					if err != nil {
						return err
					}
					g.creds, err = issue.MintPerson(ctx, t.Paths, nc, name, role, channels)
					nc.Close()
					if errors.Is(err, issue.ErrReservedName) {
						return usage(err)
					}
					if err != nil {
						return err
					}
				}
			}
			if g.creds != "" {
				opts.Name = ""
			}
			log := line.NewHeldLog(g.stderr)
			opts.Logf = log.Logf
			e, err := g.endpoint(ctx, opts)
			if err != nil {
				return err
			}
			defer e.Close()
			log.Watch(func() bool { return e.Conn().Status() == nats.CONNECTED })
			_, p, _, _ := g.paths()
			err = line.Run(ctx, e, g.stdin, g.stdout, host.WatchLost(ctx, p, g.server, e.Conn()))
			if errors.As(err, new(line.MeshLostError)) {
				// What the endpoint says while it lets go of a mesh that
				// is gone is noise: the person was told in words.
				log.Drop()
				e.Conn().Close()
			}
			return err
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "your name on the mesh (required unless --creds)")
	cmd.Flags().StringVar(&role, "role", "", "a role whose tasks you take")
	cmd.Flags().StringSliceVar(&channels, "channel", nil, "channel to join (repeatable); the first is where plain lines go")
	return cmd
}
