package clirender

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
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

// Inbox prints the items an inbox read collected, as me reads them.
func Inbox(w io.Writer, items []*mesh.Item, me wire.Principal, asJSON bool) {
	switch {
	case asJSON:
		out := make([]itemJSON, len(items))
		for i, it := range items {
			out[i] = itemJSON{Kind: it.Kind, Seq: it.Seq, Historical: it.Historical, Durable: it.Durable, Received: it.Received, Message: &it.Msg}
		}
		JSON(w, out)
	case len(items) == 0:
		fmt.Fprintln(w, "Inbox empty, no new messages.")
	default:
		for _, it := range items {
			fmt.Fprintln(w, render.Item(it.Kind, it.Subject, it.Msg, it.Historical, me))
		}
	}
}

// Rejected says how many deliveries the receive pipeline refused and
// why, e.g. "2 deliveries as forged or malformed (sender-mismatch: 2)".
func Rejected(n map[wire.Reject]int) string {
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

// Roster prints the roster as of now: the table, or as JSON with each
// fact's age in seconds (-1 for none).
func Roster(w io.Writer, peers []presence.Peer, view presence.View, now time.Time, asJSON bool) {
	if !asJSON {
		fmt.Fprint(w, render.Roster(peers, view, now))
		return
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
	JSON(w, map[string]any{"view": view.State, "fresh": view.Fresh, "staleSince": view.StaleSince, "peers": rows})
}

// Channels prints `cotal channels list`: the space defaults, then each
// registered or used channel with its effective settings.
func Channels(w io.Writer, rows []mesh.ChannelRow, def *mesh.ChannelConfig) error {
	fmt.Fprintf(w, "defaults: %s\n", def)
	if len(rows) == 0 {
		fmt.Fprintln(w, "no channels yet: one exists once someone posts to it")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANNEL\tCLASS\tREPLAY\tWINDOW\tDESCRIPTION")
	for _, r := range rows {
		name, replay := r.Channel, "off"
		if !r.Registered {
			name += " (unregistered)"
		}
		if r.Replay {
			replay = "on"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, r.Class, replay, OrDefault(r.ReplayWindow, "all"), Dash(wire.CleanLabel(r.Description)))
	}
	return tw.Flush()
}
