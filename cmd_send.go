package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// sender is one of the send verbs: it sends text to a target.
type sender func(e *mesh.Endpoint, ctx context.Context, to, text string, opts ...mesh.SendOption) (mesh.Receipt, error)

// sendFlags are the flags every send verb shares.
type sendFlags struct {
	asJSON         bool
	wait, file, id string
	timeout        time.Duration
}

func newSendCmd(g *globals) *cobra.Command {
	f := &sendFlags{}
	var mentions []string
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
	pf.BoolVar(&f.asJSON, "json", false, "print the receipt as JSON")
	pf.StringVar(&f.wait, "wait", "", "wait until the message reaches this rung: "+strings.Join(wire.Rungs, ", "))
	pf.DurationVar(&f.timeout, "timeout", 30*time.Second, "how long --wait waits")
	pf.StringVar(&f.file, "file", "", "read the message from this `file` instead of the words after the target")
	pf.StringVar(&f.id, "id", "", "the message's `id` (default a fresh one): a send again with the id of one that was not confirmed is stored once")
	verb := func(use, short string, send sender, head func(mesh.Receipt) string) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error { return runSend(g, cmd, f, args, send, head) }}
	}
	msg := verb("msg <channel> <text...>", "Post to a channel (multicast)",
		func(e *mesh.Endpoint, ctx context.Context, ch, text string, opts ...mesh.SendOption) (mesh.Receipt, error) {
			return e.Send(ctx, ch, text, append(opts, mesh.WithMentions(mentions...))...)
		}, func(r mesh.Receipt) string { return "sent to #" + r.Channel })
	msg.Flags().StringSliceVar(&mentions, "mention", nil, "@mention a peer by name (repeatable)")
	cmd.AddCommand(msg,
		verb("dm <name|id> <text...>", "Send a direct message to one peer (unicast)", (*mesh.Endpoint).DM,
			func(r mesh.Receipt) string { return "DM to " + r.ToName }),
		verb("ask <role> <text...>", "Send a task to any one holder of a role (anycast)", (*mesh.Endpoint).Ask,
			func(r mesh.Receipt) string { return "asked @" + r.ToService }))
	return cmd
}

// runSend connects as a one-shot endpoint, sends, and prints the receipt;
// with --wait it follows the message first.
func runSend(g *globals, cmd *cobra.Command, f *sendFlags, args []string, send sender, head func(mesh.Receipt) string) error {
	switch {
	case f.wait != "" && wire.RungRank(f.wait) == 0:
		return usagef("--wait %q: not a rung (one of %s)", f.wait, strings.Join(wire.Rungs, ", "))
	case f.timeout <= 0:
		return usagef("--timeout must be positive")
	}
	text, err := cliargs.MessageBody(cmd, args[1:], f.file, g.stdin, g.stderr)
	if err != nil {
		return err
	}
	if f.id != "" && !wire.TokenID(f.id) {
		return usagef("--id %q: an id is 1 to 64 of A-Z a-z 0-9 - _ (the one an unconfirmed send named)", f.id)
	}
	limit := 10 * time.Second
	if f.wait != "" {
		limit += f.timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	// A send reads no channel: it joins none (a join it never asked for
	// would be what fails when the mesh is going).
	e, err := g.endpoint(ctx, mesh.Options{OneShot: true, Subscribe: []string{}})
	if err != nil {
		return err
	}
	defer e.Close()
	var w *mesh.ReceiptWatch
	if f.wait != "" {
		if w, err = e.WatchReceipts(); err != nil {
			return err
		}
		defer w.Close()
	}
	if err := e.CheckSize(text); err != nil {
		return usagef("%s: %v", cliargs.ShortPath(cmd), err)
	}
	var opts []mesh.SendOption
	if f.id != "" {
		opts = append(opts, mesh.WithID(f.id))
	}
	sent := time.Now()
	r, err := send(e, ctx, args[0], text, opts...)
	var big *mesh.TooLargeError
	if err = e.AsTooLarge(err); errors.As(err, &big) {
		return usagef("%s: %v", cliargs.ShortPath(cmd), err)
	} else if err != nil {
		return sendError(err)
	}
	if u := e.Unheard(ctx, r); u != nil {
		defer fmt.Fprintln(g.stderr, clirender.Unheard(u))
	}
	if w == nil {
		return printReceipt(g, f, r, head(r), nil, true, sent)
	}
	want := 1
	if r.Kind == wire.KindChannel {
		if want = len(r.Mentions); want == 0 {
			return usagef("--wait follows a DM, a task, or a post's @mentions: this post mentions nobody (it was sent: %s)", r)
		}
	}
	if !f.asJSON && f.timeout > 2*time.Second {
		fmt.Fprintf(g.stderr, "sent; waiting up to %s for %s...\n", f.timeout, f.wait)
	}
	wctx, wcancel := context.WithTimeout(ctx, f.timeout)
	defer wcancel()
	progress := w.Wait(wctx, r.ID, f.wait, want, nil)
	reached := mesh.CountReached(progress, f.wait) >= want
	if !reached {
		progress = e.ExplainWaiting(ctx, r, progress)
	}
	return printReceipt(g, f, r, head(r), progress, reached, sent)
}

// sendError gives a send failure its exit code and words: a refused
// target or ACL is the user's input; an unconfirmed send says how to
// retry it.
func sendError(err error) error {
	var nc *mesh.NotConfirmedError
	if errors.As(err, &nc) {
		return fmt.Errorf("%w; send it again with --id %s and the mesh stores it once", err, nc.ID)
	}
	if mesh.BadTarget(err) {
		return usage(err)
	}
	return err
}

func printReceipt(g *globals, f *sendFlags, r mesh.Receipt, head string, progress []mesh.Progress, reached bool, sent time.Time) error {
	switch {
	case f.asJSON && f.wait == "":
		printJSON(g.stdout, r)
	case f.asJSON:
		printJSON(g.stdout, clirender.Followed{Receipt: r, Wait: f.wait, Reached: reached, Progress: progress})
	default:
		clirender.Receipt(g.stdout, head, r, progress, sent)
		if !reached {
			fmt.Fprintf(g.stderr, "gave up after %s: not every recipient reached %s\n", f.timeout, f.wait)
		}
	}
	if !reached {
		return exitError{exitFail}
	}
	return nil
}
