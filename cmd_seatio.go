package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/pty"
)

func newScreenCmd(g *globals) *cobra.Command {
	var on string
	var asJSON, follow bool
	var every time.Duration
	cmd := &cobra.Command{
		Use:   "screen <name>",
		Short: "Print a seat's current screen (--follow: each time it changes, until Ctrl-C)",
		Long: `Print a seat's current screen as text. --follow keeps asking, every
--interval, and prints the screen again each time it changed, until Ctrl-C or
the seat exits (its last screen is printed). On a terminal each screen
replaces the last; otherwise each is preceded by a line "--- <name> <time> ---".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if !follow {
				return onSeat(g, name, on, func(ctx context.Context, cl *client.Client, s client.Seat) error {
					r, err := cl.Screen(ctx, s)
					if err == nil {
						clirender.Screen(g.stdout, g.stderr, r, asJSON, false)
					}
					return err
				})
			}
			if err := client.CheckFollowEvery(every); err != nil {
				return usage(err)
			}
			d, row, err := g.caller().Located(name, on)
			if err != nil {
				return err
			}
			defer d.Close()
			ctx, stop := untilQuit(cmd.Context(), nil)
			defer stop()
			show, failed := clirender.ScreenFollower(g.stdout, g.stderr, name, asJSON)
			err = d.FollowScreen(ctx, row.Seat(), every, show, failed)
			if errors.Is(err, client.ErrSeatGone) {
				fmt.Fprintf(g.stderr, "seat %s is gone\n", name)
				return nil
			}
			return err
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "the manager instance")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON (with --follow, one object per line)")
	cmd.Flags().BoolVar(&follow, "follow", false, "print the screen each time it changes, until Ctrl-C")
	cmd.Flags().DurationVar(&every, "interval", 250*time.Millisecond, "with --follow: how often to ask for the screen")
	return cmd
}

func newStopCmd(g *globals) *cobra.Command {
	var on string
	var force, asJSON bool
	cmd := &cobra.Command{
		Use:   "stop <name>",
		Short: "Stop a seat: SIGTERM, then SIGKILL after 3 s (--force: at once)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return onSeat(g, args[0], on, func(ctx context.Context, cl *client.Client, s client.Seat) error {
				r, err := cl.Stop(ctx, s, !force)
				if err != nil {
					return err
				}
				clirender.Stopped(g.stdout, r, !force, asJSON)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "the manager instance")
	cmd.Flags().BoolVar(&force, "force", false, "SIGKILL at once")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the stopped seat's row as JSON")
	return cmd
}

func newInputCmd(g *globals) *cobra.Command {
	var on string
	var noEnter, keys, asJSON bool
	cmd := &cobra.Command{
		Use:   "input <name> <text...>",
		Short: "Type text into a seat (then Enter, unless --no-enter), or named keys with --keys",
		Long: `Type text into a seat's terminal as a paste, then a separate Enter unless
--no-enter. It prints how many bytes the seat's terminal accepted, and only
after it accepted them. Only the local operator may do this.

The text is 1 to 65536 characters, typed verbatim; put it after -- when it
starts with a dash: cotal input shell -- -x

--keys types named keys instead, raw, as a keyboard would (no paste markers),
named as tmux send-keys names them: Escape Enter Tab BSpace Space Up Down Left
Right Home End PageUp PageDown Insert Delete F1..F12, C-<key> and M-<key>, or a
single character. An unknown name is refused before anything is typed:
cotal input --keys vi Escape : q ! Enter`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			text, names := strings.Join(args[1:], " "), args[1:]
			if err := client.CheckTyped(text, names, keys, !noEnter); err != nil {
				return usage(err)
			}
			if keys {
				if _, err := pty.ParseKeys(names...); err != nil {
					return usagef("%v; nothing was typed", err) // a misspelt key is never sent
				}
			}
			return onSeat(g, args[0], on, func(ctx context.Context, cl *client.Client, s client.Seat) error {
				var r client.InputReply
				var err error
				if keys {
					r, err = cl.Keys(ctx, s, names...)
				} else {
					r, err = cl.Input(ctx, s, text, !noEnter)
				}
				if err == nil {
					clirender.Typed(g.stdout, r, asJSON)
				}
				return err
			})
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "the manager instance")
	cmd.Flags().BoolVar(&noEnter, "no-enter", false, "do not press Enter after the text")
	cmd.Flags().BoolVar(&keys, "keys", false, "the arguments after the name are key names, typed raw")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the bytes the seat accepted as JSON")
	return cmd
}
