package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

func newHistoryCmd(g *globals) *cobra.Command {
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history <channel>",
		Short: "Read a channel's retained posts (within your read ACL), or change retention",
		Long: `Read the newest retained posts of a channel, oldest first. Reading is bounded
by the read ACL, not by membership: an agent reads what its allowSubscribe
covers, through the space's delivery service.

Retention keeps each sender's last 1000 posts per channel unless
"cotal history limit" says otherwise; "cotal up" never changes the limits.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			channel := args[0]
			if err := wire.ValidateChannel(channel); err != nil {
				return usage(err)
			}
			if !wire.IsConcrete(channel) {
				return usagef("history reads one channel at a time: %q is a pattern; name one channel it covers", channel)
			}
			if limit <= 0 {
				return usagef("--limit %d: give a positive number", limit)
			}
			return g.oneShotWith(mesh.Options{Subscribe: []string{}}, func(ctx context.Context, e *mesh.Endpoint) error {
				items, complete, err := e.ReadHistory(ctx, channel, limit)
				if err != nil {
					return err
				}
				if len(items) == 0 {
					var unknown *mesh.UnknownChannelError
					if err := e.CheckKnown(ctx, channel); errors.As(err, &unknown) {
						return fmt.Errorf("%w%s", err, clirender.DidYouMean("#", unknown.Close, " (`cotal channels list` lists the channels)"))
					}
				}
				if asJSON {
					return g.resultJSON(map[string]any{"channel": channel, "complete": complete, "items": items})
				}
				clirender.History(g.stdout, channel, items, complete, limit, e.Me())
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", mesh.DefaultHistoryLimit, "how many of the newest posts to show")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.AddCommand(newHistoryLimitCmd(g), newHistoryClearCmd(g))
	return cmd
}

func newHistoryLimitCmd(g *globals) *cobra.Command {
	var maxAge time.Duration
	var maxPerSender int64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "limit",
		Short: "Show or change how long and how much channel history the space keeps",
		Long: `Without flags, show the space's channel retention. --max-age drops posts older
than the age (0 keeps them forever); --max-per-sender keeps each sender's newest
N posts per channel. A lower limit deletes what it no longer keeps at once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ageSet, perSet := cmd.Flags().Changed("max-age"), cmd.Flags().Changed("max-per-sender")
			switch {
			case maxAge < 0:
				return usagef("--max-age %s: give a positive duration, or 0 for no age limit", maxAge)
			case perSet && maxPerSender < 1:
				return usagef("--max-per-sender %d: give at least 1", maxPerSender)
			case (ageSet || perSet) && maxAge > 0 && maxAge < time.Second:
				return usagef("--max-age %s: the smallest age is 1s", maxAge)
			}
			var r broker.Retention
			err := g.operator("cotal history", func(ctx context.Context, nc *nats.Conn, space string) (err error) {
				if !ageSet && !perSet {
					r, err = broker.ChatRetention(ctx, nc, space)
					return err
				}
				var age *time.Duration
				if ageSet {
					age = &maxAge
				}
				r, err = broker.SetChatRetention(ctx, nc, space, age, maxPerSender)
				return err
			})
			if err != nil {
				return err
			}
			clirender.Retention(g.stdout, asJSON, r.MaxAge, r.MaxPerSender, r.Messages, r.Bytes)
			return nil
		},
	}
	cmd.Flags().DurationVar(&maxAge, "max-age", 0, "drop posts older than this (e.g. 72h); 0 keeps them")
	cmd.Flags().Int64Var(&maxPerSender, "max-per-sender", 0, "keep each sender's newest N posts per channel")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newHistoryClearCmd(g *globals) *cobra.Command {
	var force, dms, asJSON bool
	cmd := &cobra.Command{
		Use:   "clear --force [--dms]",
		Short: "Delete all retained channel history (and with --dms, stored DMs)",
		Long: `Delete every retained channel post of the space; with --dms also every stored
direct message, including ones not yet read. Tasks waiting for a role are
never touched. Without --force it only says what it would delete.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			var counts []broker.StreamCount
			err := g.operator("cotal history", func(ctx context.Context, nc *nats.Conn, space string) (err error) {
				counts, err = broker.ClearHistory(ctx, nc, space, dms, force)
				return err
			})
			if err != nil {
				return err
			}
			said := make([]string, len(counts))
			for i, c := range counts {
				said[i] = fmt.Sprintf("%d from %s", c.Messages, c.Stream)
			}
			switch {
			case !force:
				return usagef("this would delete %s; run again with --force to do it", strings.Join(said, " and "))
			case asJSON:
				return g.resultJSON(map[string]any{"deleted": counts})
			}
			fmt.Fprintf(g.stdout, "deleted %s\n", strings.Join(said, " and "))
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "really delete")
	cmd.Flags().BoolVar(&dms, "dms", false, "also delete stored direct messages")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was deleted as JSON")
	return cmd
}

// operator runs fn on a connection to the space's mesh as the local
// operator (or --creds): retention is the operator's to read and change.
func (g *globals) operator(name string, fn func(ctx context.Context, nc *nats.Conn, space string) error) error {
	t, err := g.resolveTarget()
	if err != nil {
		return err
	}
	nc, err := t.Connect(name)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := ctxTimeout()
	defer cancel()
	err = fn(ctx, nc, t.Paths.Space)
	if errors.Is(err, broker.ErrNoChatStream) {
		return fmt.Errorf("%w (is it provisioned?)", err)
	}
	return err
}
