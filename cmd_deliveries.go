package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/seat/client"
)

// deliveryRow is one identity lifecycle in `cotal deliveries`: how many of
// its directed messages and mentions sit at each rung, since when, and why.
type deliveryRow struct {
	Name         string    `json:"name"`
	ID           string    `json:"id"`
	LifecycleUID string    `json:"lifecycleUid"`
	Seat         string    `json:"seat,omitempty"`    // the seat's state when a manager runs it
	Manager      string    `json:"manager,omitempty"` // that manager
	Stored       int       `json:"stored"`            // stored, not yet taken by its connector
	Taken        int       `json:"taken"`             // taken, not yet injected, read or acked
	Oldest       time.Time `json:"oldest,omitzero"`   // when the oldest of them was stored
	Why          string    `json:"why,omitempty"`
	Presence     string    `json:"presence"`
	Operator     bool      `json:"operator,omitempty"` // the local operator: the person's own inbox
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
			if g.creds != "" {
				return usage(errors.New("deliveries lists every identity's waiting messages: only the local operator may (drop --creds)"))
			}
			ctx, cancel := ctxTimeout()
			defer cancel()
			e, err := g.endpoint(ctx, mesh.Options{OneShot: true})
			if err != nil {
				return err
			}
			defer e.Close()
			rows, err := listDeliveries(ctx, e)
			if err != nil {
				return err
			}
			cl, nc, err := g.managers()
			if err != nil {
				return err
			}
			defer nc.Close()
			cs, err := cl.Census(ctx, "")
			if err != nil {
				return epFailure(g, err)
			}
			rows = withSeats(rows, cs)
			if pending {
				kept := rows[:0]
				for _, r := range rows {
					if r.Stored+r.Taken > 0 {
						kept = append(kept, r)
					}
				}
				rows = kept
			}
			if asJSON {
				b, _ := json.MarshalIndent(struct {
					Rows       []deliveryRow `json:"rows"`
					Incomplete bool          `json:"incomplete"`
				}{rows, cs.Incomplete()}, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
			} else {
				printDeliveries(g, rows, pending)
			}
			if cs.Incomplete() {
				fmt.Fprintln(g.stderr, "not every manager answered: seats of the silent ones show no taken count (see cotal ps)")
				return exitError{exitFail}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&pending, "pending", false, "list only identities with something waiting")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// listDeliveries is what the broker holds unsettled for each identity,
// with each one's presence.
func listDeliveries(ctx context.Context, e *mesh.Endpoint) ([]deliveryRow, error) {
	js, err := jetstream.New(e.Conn())
	if err != nil {
		return nil, err
	}
	peers, _, err := e.Roster(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the roster: %w", err)
	}
	byID := map[string]presence.Peer{}
	for _, p := range peers {
		byID[p.ID] = p
	}
	waiting, err := delivery.ListWaiting(ctx, js, e.Space())
	if err != nil {
		return nil, err
	}
	rows := make([]deliveryRow, 0, len(waiting))
	for _, w := range waiting {
		r := deliveryRow{Name: w.Principal.Actor, ID: w.Principal.ID(), LifecycleUID: w.LifecycleUID,
			Stored: w.Stored, Taken: w.Taken, Oldest: w.Oldest, Presence: string(presence.Offline)}
		if w.Principal == e.Me() {
			// The operator is no peer with a presence: every dashboard
			// and CLI command of the space acts as it, and reads its DMs.
			r.Presence, r.Operator = "operator (you)", true
		} else if peer, ok := byID[r.ID]; ok {
			r.Name, r.Presence = peer.Name, string(peer.Status)
			if a := peer.Record.Attention; !peer.Offline && a != "" && a != presence.Open {
				r.Presence += ", " + string(a)
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// withSeats joins the managers' seats to the inbox rows: a seat's taken
// count is what its connector holds, and its state says why.
func withSeats(rows []deliveryRow, cs *client.Census) []deliveryRow {
	for i := range rows {
		r := &rows[i]
		for _, s := range cs.Rows {
			if s.ID != r.ID || s.LifecycleUID != r.LifecycleUID {
				continue
			}
			r.Seat, r.Manager = s.State, s.Manager
			r.Taken = max(r.Taken, s.Waiting)
			r.Why = seatWhy(s.Row)
		}
		if r.Why == "" {
			r.Why = identityWhy(*r)
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Name != rows[j].Name {
			return rows[i].Name < rows[j].Name
		}
		return rows[i].LifecycleUID < rows[j].LifecycleUID
	})
	return rows
}

// seatWhy says what holds a seat's connector's messages, "" for nothing
// known.
func seatWhy(s client.Row) string {
	switch {
	case s.Held != "":
		return "held: " + s.Held
	case s.Waiting == 0:
		return ""
	case s.State != "ready":
		return "seat " + s.State + ": messages are injected once it is ready"
	case !s.Injects:
		return "not injected: this seat reads its inbox itself (cotal inbox)"
	case s.PullOnly == s.Waiting:
		return "left for the agent's inbox read (its attention, or a quiet channel)"
	}
	return ""
}

// identityWhy says what holds an identity's messages from its presence.
func identityWhy(r deliveryRow) string {
	switch {
	case r.Stored+r.Taken == 0:
		return ""
	case r.Operator:
		return "unread: every dashboard shows them; r there (or cotal inbox) reads them"
	case strings.HasPrefix(r.Presence, string(presence.Offline)):
		return "offline: its connector takes them when it comes back"
	case r.Taken >= mesh.MaxInbox:
		return fmt.Sprintf("inbox full (%d items): the rest wait at stored", mesh.MaxInbox)
	case r.Stored > 0:
		return "not taken yet"
	}
	return "taken by its reader, not yet read"
}

func printDeliveries(g *globals, rows []deliveryRow, pending bool) {
	if len(rows) == 0 {
		if pending {
			fmt.Fprintln(g.stdout, "Nothing waits: every DM, task and stored mention has been settled.")
		} else {
			fmt.Fprintln(g.stdout, "No identity has an inbox on this mesh yet.")
		}
		return
	}
	now := time.Now()
	tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSEAT\tPRESENCE\tSTORED\tTAKEN\tOLDEST\tWHY")
	for _, r := range rows {
		oldest := "-"
		if !r.Oldest.IsZero() {
			oldest = render.Age(now, r.Oldest)
		}
		why := r.Why
		if why == "" && r.Stored+r.Taken == 0 {
			why = "nothing waits"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.Name, dash(r.Seat), r.Presence, r.Stored, r.Taken, oldest, dash(why))
	}
	_ = tw.Flush()
}
