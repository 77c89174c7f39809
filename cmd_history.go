package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/mesh"
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
			h, err := clirun.History(g.caller(), args[0], limit)
			if err != nil {
				return err
			}
			clirender.HistoryRead(g.stdout, h, limit, asJSON)
			return nil
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
			r, err := clirun.ChatLimit(g.caller(), maxAge, cmd.Flags().Changed("max-age"), maxPerSender, cmd.Flags().Changed("max-per-sender"))
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
			d, err := clirun.ClearHistory(g.caller(), dms, force)
			if err != nil {
				return err
			}
			clirender.Cleared(g.stdout, d, asJSON)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "really delete")
	cmd.Flags().BoolVar(&dms, "dms", false, "also delete stored direct messages")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was deleted as JSON")
	return cmd
}
