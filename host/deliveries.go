package host

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/seat/client"
)

// Delivery is one identity lifecycle as `cotal deliveries` lists it: how many of
// its directed messages and mentions sit at each rung, since when, and why.
type Delivery struct {
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

// Deliveries is what the broker holds unsettled for each identity
// lifecycle of the space, with each one's presence, read through e (the
// operator's endpoint), and what the managers' census cs says of the ones
// that are seats.
func Deliveries(ctx context.Context, e *mesh.Endpoint, cs *client.Census) ([]Delivery, error) {
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
	rows := make([]Delivery, 0, len(waiting))
	for _, w := range waiting {
		r := Delivery{Name: w.Principal.Actor, ID: w.Principal.ID(), LifecycleUID: w.LifecycleUID,
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
	return withSeats(rows, cs), nil
}

// withSeats joins the managers' seats to the inbox rows: a seat's taken
// count is what its connector holds, and its state says why.
func withSeats(rows []Delivery, cs *client.Census) []Delivery {
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
func identityWhy(r Delivery) string {
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
