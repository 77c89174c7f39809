package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat"
)

// inSeat reports the manager instance whose connector holds this process's
// identity: set in a seat's environment, with the seat's creds.
func (g *globals) inSeat() string {
	if g.creds == "" {
		return ""
	}
	return os.Getenv("COTAL_MANAGER_INSTANCE")
}

// selfCall asks the seat's connector, through its manager, to act for the
// seat; the broker vouches for the caller through the subject.
func (g *globals) selfCall(command string, args any, out any) error {
	c, nc, err := g.epClient()
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := ctxTimeout()
	defer cancel()
	r, err := c.Call(ctx, seat.Endpoint, command, args, ep.Self(), ep.On(g.inSeat()), ep.Timeout(10*time.Second))
	if err != nil {
		return epFailure(g, err)
	}
	return json.Unmarshal(r.Data, out)
}

// seatInbox is `cotal inbox` inside a seat: the connector keeps the
// seat's inbox, so the read goes to it.
func seatInbox(g *globals, peek, asJSON bool) error {
	var r struct {
		Items []seat.InboxItem `json:"items"`
	}
	if err := g.selfCall("inbox", map[string]any{"peek": peek}, &r); err != nil {
		return err
	}
	if asJSON {
		b, _ := json.MarshalIndent(r.Items, "", "  ")
		fmt.Fprintln(g.stdout, string(b))
		return nil
	}
	if len(r.Items) == 0 {
		fmt.Fprintln(g.stdout, "Inbox empty, no new messages.")
	}
	for _, it := range r.Items {
		fmt.Fprintln(g.stdout, it.Line)
	}
	return nil
}

func newSetStatusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "set-status <idle|waiting|working> [activity...]",
		Short: "Inside a seat: set the seat's status and activity on the roster",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if g.inSeat() == "" {
				return usagef("set-status changes a seat's presence and works inside a seat; a person at a terminal uses `cotal join` and /status")
			}
			switch args[0] {
			case "idle", "waiting", "working":
			default:
				return usagef("status %q: use idle, waiting or working", args[0])
			}
			var r map[string]any
			a := map[string]any{"status": args[0], "activity": strings.Join(args[1:], " ")}
			if err := g.selfCall("set-status", a, &r); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "status %v, activity %q\n", r["status"], r["activity"])
			return nil
		},
	}
}

func newLeaveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "leave <channel>",
		Short: "Inside a seat: leave a channel (its durable hold ends first)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if g.inSeat() == "" {
				return usagef("leave works inside a seat; a person at a terminal uses `cotal join` and /leave")
			}
			var r struct {
				Left bool `json:"left"`
			}
			if err := g.selfCall("leave", map[string]string{"channel": args[0]}, &r); err != nil {
				return err
			}
			if r.Left {
				fmt.Fprintf(g.stdout, "left #%s\n", args[0])
			} else {
				fmt.Fprintf(g.stdout, "you weren't on #%s\n", args[0])
			}
			return nil
		},
	}
}

// seatJoin is `cotal join --channel C` inside a seat.
func seatJoin(g *globals, channels []string) error {
	if len(channels) == 0 {
		return usagef("inside a seat, join takes --channel: the seat is already on the mesh")
	}
	for _, ch := range channels {
		var r struct {
			Summary string `json:"summary"`
		}
		if err := g.selfCall("join", map[string]string{"channel": ch}, &r); err != nil {
			return err
		}
		fmt.Fprintln(g.stdout, r.Summary)
	}
	return nil
}
