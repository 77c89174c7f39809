package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh"
)

func newInboxCmd(g *globals) *cobra.Command {
	var peek, asJSON bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "inbox",
		Short: "Show what is waiting for this identity: DMs and tasks first, then channel posts",
		Long: `Show what is waiting for this identity (the local operator, or --creds):
DMs and anycast tasks first, then channel posts. Each item is acknowledged only
once it has been printed; --peek acknowledges nothing, so the items come again.

Channel posts on live channels reach a one-shot command only while it runs:
use --wait to listen for a while.

Inside a seat it reads the seat's own inbox as a model's cotal_inbox does: at
most 48 000 characters a read, clearing only what it printed, and it says how
many are left for the next read.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if g.inSeat() != "" {
				return seatInbox(g, peek, asJSON)
			}
			ctx, cancel := context.WithTimeout(context.Background(), wait+10*time.Second)
			defer cancel()
			e, err := g.endpoint(ctx, mesh.Options{OneShot: true})
			if err != nil {
				return err
			}
			defer e.Close()
			if wait > 2*time.Second && !asJSON {
				fmt.Fprintf(g.stderr, "waiting up to %s for messages...\n", wait)
			}
			_, p, _, err := g.paths()
			read, err := host.ReadInbox(ctx, e, p, err == nil, wait)
			if err != nil {
				return err
			}
			clirender.Inbox(g.stdout, read.Items, e.Me(), asJSON)
			ackErr, noteErr := read.Settle(peek)
			if noteErr != nil {
				fmt.Fprintf(g.stderr, "cotal: could not note what was read (%v); after a mesh crash some of it may come again\n", noteErr)
			}
			if n := e.Rejected(); len(n) > 0 {
				fmt.Fprintf(g.stderr, "dropped %s\n", clirender.Rejected(n))
			}
			return ackErr
		},
	}
	cmd.Flags().BoolVar(&peek, "peek", false, "show without acknowledging")
	cmd.Flags().DurationVar(&wait, "wait", 0, "when nothing is waiting, wait this long for the first arrival")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the items as JSON")
	return cmd
}

func newRosterCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "roster",
		Short: "List the peers of the space, with the age of every fact",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return g.oneShot(func(ctx context.Context, e *mesh.Endpoint) error {
				peers, view, err := e.Roster(ctx)
				if err != nil {
					return err
				}
				clirender.Roster(g.stdout, peers, view, time.Now(), asJSON)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the roster as JSON")
	return cmd
}
