package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

func newHistoryCmd(g *globals) *cobra.Command {
	var (
		limit  int
		asJSON bool
	)
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
				return usageError{err}
			}
			if !wire.IsConcrete(channel) {
				return usagef("history reads one channel at a time: %q is a pattern; name one channel it covers", channel)
			}
			if limit <= 0 {
				return usagef("--limit %d: give a positive number", limit)
			}
			ctx, cancel := ctxTimeout()
			defer cancel()
			e, err := g.endpoint(ctx, mesh.Options{OneShot: true, Subscribe: []string{}})
			if err != nil {
				return err
			}
			defer e.Close()
			if acl := e.AllowSubscribe(); acl != nil && !wire.Covered(acl, channel) {
				return notAllowedToRead(channel, acl)
			}
			items, complete, err := e.History(ctx, channel, limit)
			if ee := ep.AsError(err); ee != nil && ee.Code == ep.CodePermissionDenied {
				return fmt.Errorf("not allowed to read #%s: %s", channel, ee.Message)
			}
			if err != nil {
				return err
			}
			if len(items) == 0 {
				if err := knownChannel(ctx, e, channel, g.readsStorage()); err != nil {
					return err
				}
			}
			if asJSON {
				b, _ := json.MarshalIndent(map[string]any{"channel": channel, "complete": complete, "items": items}, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			if len(items) == 0 {
				fmt.Fprintf(g.stdout, "#%s has no retained posts\n", channel)
				return nil
			}
			for _, h := range items {
				ts := time.UnixMilli(h.Msg.TS).Format("2006-01-02 15:04:05")
				line := render.Item(wire.KindChannel, wire.Subject{Channel: channel, Sender: h.SenderPrincipal()}, h.Msg, false, e.Me())
				fmt.Fprintf(g.stdout, "%6d %s %s\n", h.Seq, ts, line)
			}
			if !complete {
				fmt.Fprintf(g.stdout, "(older posts not shown; --limit %d)\n", limit)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", mesh.DefaultHistoryLimit, "how many of the newest posts to show")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.AddCommand(newHistoryLimitCmd(g), newHistoryClearCmd(g))
	return cmd
}

// notAllowedToRead is the refusal of a read outside the caller's read ACL.
func notAllowedToRead(channel string, acl []string) error {
	return fmt.Errorf("not allowed to read #%s: it is outside your read ACL (%s)", channel, listOrNone(acl))
}

// knownChannel says whether a channel with no retained posts exists at
// all: registered, or named by nothing; readsStorage adds the channels
// with retained posts to the close matches. An unknown one is an error naming
// the known channels it is close to. When the registry cannot be read the
// channel is taken as known: its emptiness is then all that is sure.
func knownChannel(ctx context.Context, e *mesh.Endpoint, channel string, readsStorage bool) error {
	reg, err := e.Registry(ctx)
	if err != nil {
		return nil
	}
	names, entries, err := reg.List(ctx)
	if err != nil {
		return nil
	}
	if _, ok := entries[channel]; ok {
		return nil
	}
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	if readsStorage {
		for n := range usedChannels(ctx, e) {
			known[n] = true
		}
	}
	for _, n := range e.Channels() {
		known[n] = true
	}
	delete(known, channel)
	msg := fmt.Sprintf("unknown channel #%s: it was never registered and has no retained posts", channel)
	if close := closeMatches(channel, slices.Sorted(maps.Keys(known))); len(close) > 0 {
		for i := range close {
			close[i] = "#" + close[i]
		}
		return fmt.Errorf("%s; did you mean %s?", msg, orList(close))
	}
	return fmt.Errorf("%s (`cotal channels list` lists the channels)", msg)
}

// chatLimits is what `history limit` shows and changes.
type chatLimits struct {
	MaxAge       string `json:"maxAge"` // "" = no age limit
	MaxPerSender int64  `json:"maxPerSender"`
	Messages     uint64 `json:"messages"`
	Bytes        uint64 `json:"bytes"`
}

func newHistoryLimitCmd(g *globals) *cobra.Command {
	var (
		maxAge       time.Duration
		maxPerSender int64
		asJSON       bool
	)
	cmd := &cobra.Command{
		Use:   "limit",
		Short: "Show or change how long and how much channel history the space keeps",
		Long: `Without flags, show the space's channel retention. --max-age drops posts older
than the age (0 keeps them forever); --max-per-sender keeps each sender's newest
N posts per channel. A lower limit deletes what it no longer keeps at once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			changed := cmd.Flags().Changed("max-age") || cmd.Flags().Changed("max-per-sender")
			if maxAge < 0 {
				return usagef("--max-age %s: give a positive duration, or 0 for no age limit", maxAge)
			}
			if cmd.Flags().Changed("max-per-sender") && maxPerSender < 1 {
				return usagef("--max-per-sender %d: give at least 1", maxPerSender)
			}
			if changed && maxAge > 0 && maxAge < time.Second {
				return usagef("--max-age %s: the smallest age is 1s", maxAge)
			}
			ctx, cancel := ctxTimeout()
			defer cancel()
			st, err := g.chatStream(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			cfg := st.CachedInfo().Config
			if changed {
				if cmd.Flags().Changed("max-age") {
					cfg.MaxAge = maxAge
					// The dedup window may not exceed the age limit.
					if maxAge > 0 && cfg.Duplicates > maxAge {
						cfg.Duplicates = maxAge
					}
					if maxAge == 0 && cfg.Duplicates < 2*time.Minute {
						cfg.Duplicates = 2 * time.Minute
					}
				}
				if cmd.Flags().Changed("max-per-sender") {
					cfg.MaxMsgsPerSubject = maxPerSender
				}
				js, _ := jetstream.New(st.conn())
				if _, err := js.UpdateStream(ctx, cfg); err != nil {
					return fmt.Errorf("changing retention: %w", err)
				}
				if st.Stream, err = js.Stream(ctx, cfg.Name); err != nil {
					return err
				}
			}
			info, err := st.Info(ctx)
			if err != nil {
				return err
			}
			l := chatLimits{MaxPerSender: info.Config.MaxMsgsPerSubject, Messages: info.State.Msgs, Bytes: info.State.Bytes}
			if info.Config.MaxAge > 0 {
				l.MaxAge = info.Config.MaxAge.String()
			}
			if asJSON {
				b, _ := json.MarshalIndent(l, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			age := "forever"
			if l.MaxAge != "" {
				age = "for " + l.MaxAge
			}
			fmt.Fprintf(g.stdout, "channel history: each sender's newest %d posts per channel, kept %s; now %d posts, %s\n",
				l.MaxPerSender, age, l.Messages, humanBytes(int64(l.Bytes)))
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
			ctx, cancel := ctxTimeout()
			defer cancel()
			st, err := g.chatStream(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			js, _ := jetstream.New(st.conn())
			names := []string{wire.ChatStream(st.space)}
			if dms {
				names = append(names, wire.DMStream(st.space))
			}
			counts, err := clearStreams(ctx, js, names, force)
			if err != nil {
				return err
			}
			if !force {
				return usagef("this would delete %s; run again with --force to do it", joinCounts(counts))
			}
			if asJSON {
				printJSON(g.stdout, map[string]any{"deleted": counts})
				return nil
			}
			fmt.Fprintf(g.stdout, "deleted %s\n", joinCounts(counts))
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "really delete")
	cmd.Flags().BoolVar(&dms, "dms", false, "also delete stored direct messages")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was deleted as JSON")
	return cmd
}

// streamCount is how many messages a stream held when it was counted.
type streamCount struct {
	Stream   string `json:"stream"`
	Messages uint64 `json:"messages"`
}

func (c streamCount) String() string { return fmt.Sprintf("%d from %s", c.Messages, c.Stream) }

func joinCounts(counts []streamCount) string {
	s := make([]string, len(counts))
	for i, c := range counts {
		s[i] = c.String()
	}
	return strings.Join(s, " and ")
}

// clearStreams says what each named stream holds and, with force, purges
// the streams it counted: each is looked up once.
func clearStreams(ctx context.Context, js jetstream.JetStream, names []string, force bool) ([]streamCount, error) {
	var (
		counts  []streamCount
		streams []jetstream.Stream
	)
	for _, n := range names {
		s, err := js.Stream(ctx, n)
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", n, err)
		}
		streams = append(streams, s)
		counts = append(counts, streamCount{Stream: n, Messages: s.CachedInfo().State.Msgs})
	}
	if !force {
		return counts, nil
	}
	testHookBeforePurge()
	for i, s := range streams {
		if err := s.Purge(ctx); err != nil {
			return counts, fmt.Errorf("clearing %s: %w", names[i], err)
		}
	}
	return counts, nil
}

// testHookBeforePurge runs between counting and purging; a test removes a
// stream there, as another process could.
var testHookBeforePurge = func() {}

// boundStream is a stream with the connection it was read on; Close
// closes that connection.
type boundStream struct {
	jetstream.Stream
	space string
	nc    *nats.Conn
}

func (b *boundStream) conn() *nats.Conn { return b.nc }

// Close closes the stream's connection.
func (b *boundStream) Close() { b.nc.Close() }

// chatStream opens the space's CHAT stream as the local operator:
// retention is the operator's to change.
func (g *globals) chatStream(ctx context.Context) (*boundStream, error) {
	t, err := g.resolveTarget()
	if err != nil {
		return nil, err
	}
	nc, err := t.connect("cotal history")
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, wire.ChatStream(t.paths.Space))
	if err != nil {
		nc.Close()
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, fmt.Errorf("space %s has no channel history stream (is it provisioned?)", t.paths.Space)
		}
		return nil, fmt.Errorf("opening channel history: %w (retention needs the operator's credential)", err)
	}
	return &boundStream{Stream: st, space: t.paths.Space, nc: nc}, nil
}
