package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

func newSendCmd(g *globals) *cobra.Command {
	var f clirun.SendRequest
	var file string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "send",
		Short: "Send a channel post, a DM or an anycast task",
		Long: `Send as the local operator, or as --creds / COTAL_CREDS.

A receipt says where the message was stored and how the recipient looked at
send time; it never claims delivery.

--wait follows the message at its recipient, rung by rung: stored (the broker
has it), taken (the recipient's connector holds it), injected into its
terminal or pulled by its inbox read (one rung), acked (settled). A DM or a
task is followed to its recipient; a post to every peer it @mentions. When
--timeout ends first, the command says which rung was reached and why it
waits there, and exits 1.

The text is the words after the target; a lone - reads it from standard
input and --file from a file (a trailing newline is dropped). An empty
message, or one larger than the mesh takes, is refused and nothing is sent.`,
	}
	pf := cmd.PersistentFlags()
	pf.BoolVar(&asJSON, "json", false, "print the receipt as JSON")
	pf.StringVar(&f.Wait, "wait", "", "wait until the message reaches this rung: "+strings.Join(wire.Rungs, ", "))
	pf.DurationVar(&f.Timeout, "timeout", 30*time.Second, "how long --wait waits")
	pf.StringVar(&file, "file", "", "read the message from this `file` instead of the words after the target")
	pf.StringVar(&f.ID, "id", "", "the message's `id` (default a fresh one): a send again with the id of one that was not confirmed is stored once")
	verb := func(use, short string, kind wire.Kind) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: cobra.MinimumNArgs(1), RunE: func(cmd *cobra.Command, args []string) error {
			r := f
			r.Kind, r.To, r.Cmd = kind, args[0], cliargs.ShortPath(cmd)
			r.Body = func() (string, error) { return cliargs.MessageBody(cmd, args[1:], file, g.stdin, g.stderr) }
			r.Waiting = func(timeout time.Duration, rung string) { clirender.SendWaiting(g.stderr, asJSON, timeout, rung) }
			s, err := clirun.Send(g.caller(), r)
			if err == nil {
				clirender.Sent(g.stdout, g.stderr, s, asJSON)
			}
			clirender.UnheardLine(g.stderr, s.Unheard)
			if err == nil && !s.Reached {
				return exitError{exitFail}
			}
			return err
		}}
	}
	msg := verb("msg <channel> <text...>", "Post to a channel (multicast)", wire.KindChannel)
	msg.Flags().StringSliceVar(&f.Mentions, "mention", nil, "@mention a peer by name (repeatable)")
	cmd.AddCommand(msg,
		verb("dm <name|id> <text...>", "Send a direct message to one peer (unicast)", wire.KindDM),
		verb("ask <role> <text...>", "Send a task to any one holder of a role (anycast)", wire.KindAnycast))
	return cmd
}

func newHistoryCmd(g *globals) *cobra.Command {
	var limit int
	var asJSON bool
	cmd := withJSON(&cobra.Command{
		Use:   "history <channel>",
		Short: "Read a channel's retained posts (within your read ACL), or change retention",
		Long: `Read the newest retained posts of a channel, oldest first. Reading is bounded
by the read ACL, not by membership: an agent reads what its allowSubscribe
covers, through the space's delivery service.

Retention keeps each sender's last 1000 posts per channel unless
"cotal history limit" says otherwise; "cotal up" never changes the limits.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			h, err := clirun.History(g.caller(), args[0], limit)
			return shown(err, func() { clirender.HistoryRead(g.stdout, h, limit, asJSON) })
		},
	}, &asJSON, "print as JSON")
	cmd.Flags().IntVar(&limit, "limit", mesh.DefaultHistoryLimit, "how many of the newest posts to show")
	cmd.AddCommand(newHistoryLimitCmd(g), newHistoryClearCmd(g))
	return cmd
}

func newHistoryLimitCmd(g *globals) *cobra.Command {
	var maxAge time.Duration
	var maxPerSender int64
	var asJSON bool
	cmd := withJSON(&cobra.Command{
		Use:   "limit",
		Short: "Show or change how long and how much channel history the space keeps",
		Long: `Without flags, show the space's channel retention. --max-age drops posts older
than the age (0 keeps them forever); --max-per-sender keeps each sender's newest
N posts per channel. A lower limit deletes what it no longer keeps at once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := clirun.ChatLimit(g.caller(), maxAge, cmd.Flags().Changed("max-age"), maxPerSender, cmd.Flags().Changed("max-per-sender"))
			return shown(err, func() { clirender.Retention(g.stdout, asJSON, r.MaxAge, r.MaxPerSender, r.Messages, r.Bytes) })
		},
	}, &asJSON, "print as JSON")
	cmd.Flags().DurationVar(&maxAge, "max-age", 0, "drop posts older than this (e.g. 72h); 0 keeps them")
	cmd.Flags().Int64Var(&maxPerSender, "max-per-sender", 0, "keep each sender's newest N posts per channel")
	return cmd
}

func newHistoryClearCmd(g *globals) *cobra.Command {
	var force, dms, asJSON bool
	cmd := withJSON(&cobra.Command{
		Use:   "clear --force [--dms]",
		Short: "Delete all retained channel history (and with --dms, stored DMs)",
		Long: `Delete every retained channel post of the space; with --dms also every stored
direct message, including ones not yet read. Tasks waiting for a role are
never touched. Without --force it only says what it would delete.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			d, err := clirun.ClearHistory(g.caller(), dms, force)
			return shown(err, func() { clirender.Cleared(g.stdout, d, asJSON) })
		},
	}, &asJSON, "print what was deleted as JSON")
	cmd.Flags().BoolVar(&force, "force", false, "really delete")
	cmd.Flags().BoolVar(&dms, "dms", false, "also delete stored direct messages")
	return cmd
}
