package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/mcp"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/seat/client"
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
func (g *globals) selfCall(call func(context.Context, client.Self) error) error {
	cl, nc, err := g.managers()
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := ctxTimeout()
	defer cancel()
	if err := call(ctx, cl.Self(g.inSeat())); err != nil {
		return epFailure(g, err)
	}
	return nil
}

// seatInbox is `cotal inbox` inside a seat: the connector keeps the
// seat's inbox, so the read goes to it, bounded as a model's read is (an
// agent reads this output into its context, so a backlog comes in
// windows and only what was printed is cleared).
func seatInbox(g *globals, peek, asJSON bool) error {
	var w mesh.Window
	if err := g.selfCall(func(ctx context.Context, s client.Self) (err error) {
		w, err = s.InboxWindow(ctx, peek)
		return err
	}); err != nil {
		return err
	}
	if asJSON {
		printJSON(g.stdout, w)
		return nil
	}
	fmt.Fprintln(g.stdout, mcp.WindowText(w, "run `cotal inbox` again"))
	return nil
}

func newSetStatusCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
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
			activity := strings.Join(args[1:], " ")
			var r client.StatusSet
			if err := g.selfCall(func(ctx context.Context, s client.Self) (err error) {
				r, err = s.SetStatus(ctx, client.StatusArgs{Status: args[0], Activity: &activity})
				return err
			}); err != nil {
				return err
			}
			clirender.StatusSet(g.stdout, r, asJSON)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newLeaveCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "leave <channel>",
		Short: "Inside a seat: leave a channel (its durable hold ends first)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if g.inSeat() == "" {
				return usagef("leave works inside a seat; a person at a terminal uses `cotal join` and /leave")
			}
			var left bool
			if err := g.selfCall(func(ctx context.Context, s client.Self) (err error) {
				left, err = s.Leave(ctx, args[0])
				return err
			}); err != nil {
				return err
			}
			clirender.Left(g.stdout, args[0], left, asJSON)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// seatJoin is `cotal join --channel C` inside a seat.
func seatJoin(g *globals, channels []string) error {
	if len(channels) == 0 {
		return usagef("inside a seat, join takes --channel: the seat is already on the mesh")
	}
	for _, ch := range channels {
		var r client.JoinedReply
		if err := g.selfCall(func(ctx context.Context, s client.Self) (err error) {
			r, err = s.Join(ctx, ch)
			return err
		}); err != nil {
			return err
		}
		fmt.Fprintln(g.stdout, r.Summary)
	}
	return nil
}
