package main

import (
	"context"
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/seat/attach/tty"
)

func newAttachCmd(g *globals) *cobra.Command {
	var (
		on                    string
		readOnly, noReconnect bool
	)
	cmd := &cobra.Command{
		Use:   "attach <name>",
		Short: "Work inside a seat's terminal; Ctrl-] detaches and leaves it running",
		Long: `Join your terminal to a seat's: you see its screen as it is now and type
into it, every key as typed (Ctrl-C, Esc, arrows, function keys, pastes). The
seat takes your window's size. Ctrl-] detaches; set COTAL_DETACH_KEY (ctrl-<c>
or ^<c>) for another key. The seat never waits for you: if your terminal falls
behind, output is dropped, a notice says how much, and the screen is repainted.

A lost connection is retried after 1, 2, 5, 10 and then every 30 s, with the
screen repainted once back (--no-reconnect: end instead). The attach ends
when the seat exits or is stopped (exit 0), or when the manager refuses it.
Several people may attach to one seat at once; --read-only watches without
typing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := tty.ParseDetachKey(os.Getenv(tty.DetachKeyEnv))
			if err != nil {
				return usage(err)
			}
			o := tty.Options{Name: args[0], In: os.Stdin, Out: g.stdout, DetachKey: key, ReadOnly: readOnly, NoReconnect: noReconnect}
			return runAttach(cmd.Context(), g, on, o)
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "the manager instance")
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "watch without typing: your keys are not sent")
	cmd.Flags().BoolVar(&noReconnect, "no-reconnect", false, "one session: end when the connection is lost instead of reconnecting")
	return cmd
}

// runAttach locates the seat and attaches the terminal to it until it
// ends, then says how it ended.
func runAttach(ctx context.Context, g *globals, on string, o tty.Options) error {
	d, row, err := g.caller().Located(o.Name, on)
	if err != nil {
		return err
	}
	defer d.Close()
	ctx, stop := untilQuit(ctx, nil)
	defer stop()
	end, err := tty.RunSeat(ctx, o, d.Client, row)
	if end == tty.Failed {
		if errors.Is(err, tty.ErrGone) {
			return err
		}
		return clirun.Refused(err)
	}
	if clirender.AttachEnd(g.stderr, end, o.Name) {
		return exitError{exitFail}
	}
	return nil
}
