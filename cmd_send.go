package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/mesh/wire"
)

func newSendCmd(g *globals) *cobra.Command {
	var f clirun.SendRequest
	var file string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "send",
		Short: "Send a channel post, a DM or an anycast task",
		Long: `Send as the local operator, or as --creds / COTAL_CREDS.

A receipt says where the message was stored and how the recipient looked at
send time; it never claims delivery.

--wait follows the message at its recipient, rung by rung: stored (the broker
has it), taken (the recipient's connector holds it), injected into its
terminal or pulled by its inbox read (one rung), acked (settled). A DM or a
task is followed to its recipient; a post to every peer it @mentions. When
--timeout ends first, the command says which rung was reached and why it
waits there, and exits 1.

The text is the words after the target; a lone - reads it from standard
input and --file from a file (a trailing newline is dropped). An empty
message, or one larger than the mesh takes, is refused and nothing is sent.`,
	}
	pf := cmd.PersistentFlags()
	pf.BoolVar(&asJSON, "json", false, "print the receipt as JSON")
	pf.StringVar(&f.Wait, "wait", "", "wait until the message reaches this rung: "+strings.Join(wire.Rungs, ", "))
	pf.DurationVar(&f.Timeout, "timeout", 30*time.Second, "how long --wait waits")
	pf.StringVar(&file, "file", "", "read the message from this `file` instead of the words after the target")
	pf.StringVar(&f.ID, "id", "", "the message's `id` (default a fresh one): a send again with the id of one that was not confirmed is stored once")
	verb := func(use, short string, kind wire.Kind) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: cobra.MinimumNArgs(1), RunE: func(cmd *cobra.Command, args []string) error {
			r := f
			r.Kind, r.To, r.Cmd = kind, args[0], cliargs.ShortPath(cmd)
			r.Body = func() (string, error) { return cliargs.MessageBody(cmd, args[1:], file, g.stdin, g.stderr) }
			r.Waiting = func(timeout time.Duration, rung string) { clirender.SendWaiting(g.stderr, asJSON, timeout, rung) }
			s, err := clirun.Send(g.caller(), r)
			if err == nil {
				clirender.Sent(g.stdout, g.stderr, s, asJSON)
			}
			clirender.UnheardLine(g.stderr, s.Unheard)
			if err == nil && !s.Reached {
				return exitError{exitFail}
			}
			return err
		}}
	}
	msg := verb("msg <channel> <text...>", "Post to a channel (multicast)", wire.KindChannel)
	msg.Flags().StringSliceVar(&f.Mentions, "mention", nil, "@mention a peer by name (repeatable)")
	cmd.AddCommand(msg,
		verb("dm <name|id> <text...>", "Send a direct message to one peer (unicast)", wire.KindDM),
		verb("ask <role> <text...>", "Send a task to any one holder of a role (anycast)", wire.KindAnycast))
	return cmd
}

// sendError gives a send failure its exit code and words (clirun.SendError).
func sendError(err error) error { return clirun.SendError(err) }
