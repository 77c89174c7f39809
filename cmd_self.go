package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/seat/client"
)

func newSetStatusCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "set-status <idle|waiting|working> [activity...]",
		Short: "Inside a seat: set the seat's status and activity on the roster",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			r, err := clirun.SetStatus(g.caller(), args[0], args[1:])
			if err == nil {
				clirender.StatusSet(g.stdout, r, asJSON)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newLeaveCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "leave <channel>",
		Short: "Inside a seat: leave a channel (its durable hold ends first)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			left, err := clirun.Leave(g.caller(), args[0])
			if err == nil {
				clirender.Left(g.stdout, args[0], left, asJSON)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// seatJoin is `cotal join --channel C` inside a seat.
func seatJoin(g *globals, channels []string) error {
	return clirun.SeatJoin(g.caller(), channels, func(r client.JoinedReply) { fmt.Fprintln(g.stdout, r.Summary) })
}
