package main

import (
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/tui/line"
)

func newJoinCmd(g *globals) *cobra.Command {
	var j clirun.Joining
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
				return seatJoin(g, j.Channels)
			}
			ctx, stop := untilQuit(cmd.Context(), nil)
			defer stop()
			return clirun.Join(ctx, g.caller(), j, g.stdin, g.stdout, g.stderr)
		},
	}
	cmd.Flags().StringVar(&j.Name, "name", "", "your name on the mesh (required unless --creds)")
	cmd.Flags().StringVar(&j.Role, "role", "", "a role whose tasks you take")
	cmd.Flags().StringSliceVar(&j.Channels, "channel", nil, "channel to join (repeatable); the first is where plain lines go")
	return cmd
}
