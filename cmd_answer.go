package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/seat/client"
)

// newAnswerCmd is `cotal approve` (decision allow) or `cotal deny`: a
// person's answer to the permission prompt a seat waits on, sent back
// through the hook that holds it, so no keystroke answers the dialog.
func newAnswerCmd(g *globals, decision string) *cobra.Command {
	var on string
	var asJSON bool
	use, short, long := "approve <name>", "Approve what a seat waits on (its permission prompt)",
		`Approve the permission prompt a seat waits on ("approve Bash(touch x)", as ps
and the dashboard show it). The answer goes back through the seat's harness
hook that holds the prompt, as the harness's own allow: nothing is typed
into the seat. A seat waiting on something cotal cannot answer (a question,
a dialog at its start) says so: attach to answer it. Only the local operator
may answer.`
	if decision == client.AnswerDeny {
		use, short, long = "deny <name> [reason...]", "Deny what a seat waits on (its permission prompt), telling its model why",
			`Deny the permission prompt a seat waits on. The reason, when given, is told
to its model with the refusal. Like approve, the answer goes back through the
seat's hook; nothing is typed into the seat. Only the local operator may
answer.`
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			message, err := client.AnswerMessage(decision, args[1:])
			if err != nil {
				return usage(err)
			}
			return onSeat(g, args[0], on, func(ctx context.Context, cl *client.Client, s client.Seat) error {
				r, err := cl.Answer(ctx, s, decision, message)
				if err == nil {
					clirender.Answered(g.stdout, r, asJSON)
				}
				return err
			})
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "the manager instance")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the answer as JSON")
	return cmd
}
