package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// itemJSON is one inbox item in `cotal inbox --json`.
type itemJSON struct {
	Kind       wire.Kind     `json:"kind"`
	Seq        uint64        `json:"seq,omitempty"`
	Historical bool          `json:"historical"`
	Durable    bool          `json:"durable"`
	Received   time.Time     `json:"received"`
	Message    *wire.Message `json:"message"`
}

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
			handled := ""
			if _, p, _, err := g.paths(); err == nil && p.Space == e.Space() {
				handled = p.HandledFile(e.Me().ID(), e.LifecycleUID())
			}
			e.AssumeHandled(config.ReadHandled(handled))
			items, err := e.Collect(ctx, wait)
			if err != nil {
				return err
			}
			switch {
			case asJSON:
				out := make([]itemJSON, len(items))
				for i, it := range items {
					out[i] = itemJSON{Kind: it.Kind, Seq: it.Seq, Historical: it.Historical, Durable: it.Durable, Received: it.Received, Message: &it.Msg}
				}
				printJSON(g.stdout, out)
			case len(items) == 0:
				fmt.Fprintln(g.stdout, "Inbox empty, no new messages.")
			default:
				for _, it := range items {
					fmt.Fprintln(g.stdout, render.Item(it.Kind, it.Subject, it.Msg, it.Historical, e.Me()))
				}
			}
			var ackErr error
			for _, it := range items {
				if peek {
					_ = it.Release()
				} else if err := it.Ack(); err != nil && ackErr == nil {
					ackErr = fmt.Errorf("printed, but the ack failed, so it will come again: %w", err)
				}
			}
			if !peek && len(items) > 0 {
				if err := config.WriteHandled(handled, e.Handled()); err != nil {
					fmt.Fprintf(g.stderr, "cotal: could not note what was read (%v); after a mesh crash some of it may come again\n", err)
				}
			}
			if n := e.Rejected(); len(n) > 0 {
				fmt.Fprintf(g.stderr, "dropped %s\n", describeRejected(n))
			}
			return ackErr
		},
	}
	cmd.Flags().BoolVar(&peek, "peek", false, "show without acknowledging")
	cmd.Flags().DurationVar(&wait, "wait", 0, "when nothing is waiting, wait this long for the first arrival")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the items as JSON")
	return cmd
}

// describeRejected says how many deliveries the receive pipeline refused
// and why, e.g. "2 deliveries as forged or malformed (sender-mismatch: 2)".
func describeRejected(n map[wire.Reject]int) string {
	total := 0
	reasons := make([]string, 0, len(n))
	for r, c := range n {
		total += c
		reasons = append(reasons, fmt.Sprintf("%s: %d", r, c))
	}
	sort.Strings(reasons)
	noun := "deliveries"
	if total == 1 {
		noun = "delivery"
	}
	return fmt.Sprintf("%d %s as forged or malformed (%s)", total, noun, strings.Join(reasons, ", "))
}

// peerJSON is one roster row in `cotal roster --json`, ages in seconds.
type peerJSON struct {
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	Role          string  `json:"role,omitempty"`
	Status        string  `json:"status"`
	OfflineReason string  `json:"offlineReason,omitempty"`
	Activity      string  `json:"activity,omitempty"`
	Attention     string  `json:"attention,omitempty"`
	LifecycleUID  string  `json:"lifecycleUid,omitempty"`
	StatusAge     float64 `json:"statusAgeSeconds"`
	HeardAge      float64 `json:"heardAgeSeconds"`
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
				now := time.Now()
				if !asJSON {
					fmt.Fprint(g.stdout, render.Roster(peers, view, now))
					return nil
				}
				age := func(t time.Time) float64 {
					if t.IsZero() {
						return -1
					}
					return now.Sub(t).Round(time.Millisecond).Seconds()
				}
				rows := make([]peerJSON, len(peers))
				for i, p := range peers {
					rows[i] = peerJSON{
						ID: p.ID, Name: p.Name, Role: p.Role, Status: string(p.Status), OfflineReason: p.OfflineReason,
						Activity: p.Record.Activity, Attention: string(p.Record.Attention), LifecycleUID: p.Record.LifecycleUID,
						StatusAge: age(p.StatusSince), HeardAge: age(p.Heard()),
					}
				}
				return g.resultJSON(map[string]any{"view": view.State, "fresh": view.Fresh, "staleSince": view.StaleSince, "peers": rows})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the roster as JSON")
	return cmd
}
