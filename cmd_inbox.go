package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
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
				w, err := clirun.SeatInbox(g.caller(), peek)
				if err == nil {
					clirender.SeatInbox(g.stdout, w, asJSON)
				}
				return err
			}
			in, err := clirun.ReadInbox(g.caller(), wait, func() { clirender.InboxWaiting(g.stderr, asJSON, wait) })
			if err != nil {
				return err
			}
			clirender.Inbox(g.stdout, in.Items, in.Me, asJSON)
			s := in.Settle(peek)
			clirender.InboxSettled(g.stderr, s)
			return s.AckErr
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
			peers, view, err := clirun.Roster(g.caller())
			if err == nil {
				clirender.Roster(g.stdout, peers, view, time.Now(), asJSON)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the roster as JSON")
	return cmd
}

func newDeliveriesCmd(g *globals) *cobra.Command {
	var pending, asJSON bool
	cmd := &cobra.Command{
		Use:   "deliveries",
		Short: "List what waits for each seat and identity, at which rung and why",
		Long: `List, per identity and per seat, the DMs, tasks and stored mentions that
have not been settled yet: stored (the broker has them, the recipient's
connector has not taken them) and taken (its connector holds them, not yet
injected into the seat's terminal or read). The oldest column is when the
oldest of them was stored; the why column says what holds them: offline,
held by a person typing in the seat, attention, a seat that reads its inbox
itself, or a full inbox.

Only the local operator may list deliveries.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := clirun.Deliveries(g.caller(), pending)
			if err != nil {
				return err
			}
			if clirender.DeliveryList(g.stdout, g.stderr, l, pending, asJSON); l.Incomplete {
				return exitError{exitFail}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&pending, "pending", false, "list only identities with something waiting")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
