package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/seat/client"
)

func newHookCmd(g *globals) *cobra.Command {
	var stream bool
	cmd := &cobra.Command{
		Use:   "hook <event> | hook --stream",
		Short: "Inside a seat: what the harness's hooks run (Claude Code's settings call it for each event)",
		Long: `Run by a seat's harness for one of its hook events, with the event's JSON
on stdin: it hands the event to the seat's connector (through the manager
hosting the seat, as the seat) and prints what the hook answers: the
messages waiting for the model as added context, a person's approve or deny
for a permission prompt. It never breaks the harness's session: on any
failure it prints nothing, exits 0, and says why on stderr and, when it can,
in the manager's log. Outside a seat it does nothing.

With --stream it stays up for a harness plugin that lives as long as its
harness (opencode's): one event a line on stdin, {"id": N, "event": E,
"input": {...}}, and one line back on stdout for each, {"id": N,
"output": "..."} (with "error" when it failed), each event handled as its
own hook would be. It ends when stdin does. Unable to act for a seat (not
in one, no creds, no mesh), it exits 1 at once, saying why on stderr, so
that the plugin runs a hook per event instead.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if stream {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		// Its creds are read when it runs, so a bad one is reported, not
		// an exit status the harness would show.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, args []string) error {
			if stream { // not in a seat, or not reaching the mesh, it fails at once: its plugin goes back to a hook per event
				err := asSeat(g, cmd, func(ctx context.Context, s client.Self) error {
					return s.RunHookStream(ctx, g.stdin, g.stdout, g.stderr)
				})
				if err != nil {
					fmt.Fprintf(g.stderr, "cotal hook --stream: %v\n", err)
					return exitError{exitFail}
				}
				return nil
			}
			input, err := client.ReadHookInput(g.stdin)
			if err == nil {
				err = asSeat(g, cmd, func(ctx context.Context, s client.Self) error { return s.RunHook(ctx, args[0], input, g.stdout) })
			}
			if err != nil { // only printed: a hook never breaks its harness's session
				fmt.Fprintf(g.stderr, "cotal hook %s: %v\n", args[0], err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&stream, "stream", false, "stay up and take one event a line of JSON on stdin, answering each with a line on stdout")
	return cmd
}

// asSeat runs fn as this process's seat, until it ends or the harness
// stops the hook (a permission prompt answered at the terminal: the hook
// says so and prints nothing).
func asSeat(g *globals, cmd *cobra.Command, fn func(context.Context, client.Self) error) error {
	if g.inSeat() == "" {
		return fmt.Errorf("not inside a seat (no COTAL_MANAGER_INSTANCE and COTAL_CREDS): nothing to do")
	}
	if _, err := loadCreds(g.creds, "COTAL_CREDS"); err != nil {
		return err
	}
	cl, nc, err := g.managers()
	if err != nil {
		return fmt.Errorf("reaching the mesh: %v", err)
	}
	defer nc.Close()
	ctx, stop := untilQuit(cmd.Context(), nil)
	defer stop()
	return fn(ctx, cl.Self(g.inSeat()))
}
