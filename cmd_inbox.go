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
	cmd := withJSON(&cobra.Command{
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
			if g.caller().InSeat() != "" {
				w, err := clirun.SeatInbox(g.caller(), peek)
				return shown(err, func() { clirender.SeatInbox(g.stdout, w, asJSON) })
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
	}, &asJSON, "print the items as JSON")
	cmd.Flags().BoolVar(&peek, "peek", false, "show without acknowledging")
	cmd.Flags().DurationVar(&wait, "wait", 0, "when nothing is waiting, wait this long for the first arrival")
	return cmd
}

func newRosterCmd(g *globals) *cobra.Command {
	var asJSON bool
	return withJSON(&cobra.Command{
		Use:   "roster",
		Short: "List the peers of the space, with the age of every fact",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			peers, view, err := clirun.Roster(g.caller())
			return shown(err, func() { clirender.Roster(g.stdout, peers, view, time.Now(), asJSON) })
		},
	}, &asJSON, "print the roster as JSON")
}

func newDeliveriesCmd(g *globals) *cobra.Command {
	var pending, asJSON bool
	cmd := withJSON(&cobra.Command{
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
	}, &asJSON, "print as JSON")
	cmd.Flags().BoolVar(&pending, "pending", false, "list only identities with something waiting")
	return cmd
}

// addChannelFlags registers the registry fields a set or default command
// may change; withTexts adds the channel's own texts.
func addChannelFlags(cmd *cobra.Command, f *clirun.ChannelFlags, withTexts bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.Replay, "replay", "", "replay history to a joiner: on or off")
	fl.StringVar(&f.Window, "window", "", "how far back a replay reaches, e.g. 30m, 24h, 7d")
	fl.StringVar(&f.Class, "class", "", "delivery class: live (subscribers at send time) or durable (stored for every member)")
	if withTexts {
		fl.StringVar(&f.Description, "description", "", "what the channel is for (at most 200 characters)")
		fl.StringVar(&f.Instructions, "instructions", "", "what posters should know (at most 2000 characters)")
	}
}

func newChannelsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "channels",
		Short: "List channels and set how they deliver and replay",
		Long: `The channel registry says, per channel, whether a joiner gets history
(replay, window) and whether posts are stored for absent members (class durable)
or reach only those subscribed at send time (class live). A channel exists once
someone posts to it; registering it is optional. Unset values fall back to the
space defaults, then to replay on, whole retention, durable.`,
	}
	var asJSON bool
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print as JSON")
	list := &cobra.Command{
		Use:   "list",
		Short: "Every registered or used channel with its effective settings",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			rows, def, err := clirun.Channels(g.caller())
			if err != nil {
				return err
			}
			return clirender.ChannelList(g.stdout, rows, def, asJSON)
		},
	}
	var setFlags, defFlags clirun.ChannelFlags
	set := &cobra.Command{
		Use:   "set <channel>",
		Short: "Register a channel or change its settings (merged with what is set)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			got, err := clirun.SetChannel(g.caller(), args[0], setFlags)
			return shown(err, func() { clirender.ChannelConfig(g.stdout, args[0], got, asJSON) })
		},
	}
	addChannelFlags(set, &setFlags, true)
	def := &cobra.Command{
		Use:   "default",
		Short: "Show or change the space defaults every channel falls back to",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			got, err := clirun.ChannelDefaults(g.caller(), defFlags)
			return shown(err, func() { clirender.ChannelConfig(g.stdout, "", got, asJSON) })
		},
	}
	addChannelFlags(def, &defFlags, false)
	cmd.AddCommand(list, set, def)
	return cmd
}
