package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// endpoint connects a CLI command to the space's mesh as --creds, or as
// the local operator.
func (g *globals) endpoint(ctx context.Context, o mesh.Options) (*mesh.Endpoint, error) {
	t, err := g.resolveTarget()
	if err != nil {
		return nil, err
	}
	o.URL, o.Creds = t.url, t.creds
	if o.Creds == "" || g.space != "" {
		o.Space = t.paths.Space
	}
	if o.Creds == "" && o.Name == "" {
		o.Name = issue.OperatorPrincipal().Actor
	}
	if o.Logf == nil {
		o.Logf = func(format string, args ...any) { fmt.Fprintf(g.stderr, "cotal: "+format+"\n", args...) }
	}
	e, err := mesh.Connect(ctx, o)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// idOption is the --id of a send, none when it was not given.
func idOption(id string) mesh.SendOption {
	if id == "" {
		return func(*wire.Message) {}
	}
	return mesh.WithID(id)
}

// sendError turns a send failure into the right exit code and words: a
// refused target or ACL is the user's input; an unconfirmed send says how
// to retry it.
func sendError(err error) error {
	var nc *mesh.NotConfirmedError
	if errors.As(err, &nc) {
		return fmt.Errorf("%w; send it again with --id %s and the mesh stores it once", err, nc.ID)
	}
	for _, target := range []error{mesh.ErrNoPeer, mesh.ErrAmbiguous, mesh.ErrNoDefaultChannel, wire.ErrInvalidChannel, wire.ErrWildcardTarget} {
		if errors.Is(err, target) {
			return usageError{err}
		}
	}
	return err
}

func newSendCmd(g *globals) *cobra.Command {
	var (
		asJSON   bool
		mentions []string
		waitFor  string
		timeout  time.Duration
		file     string
		msgID    string
	)
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
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print the receipt as JSON")
	cmd.PersistentFlags().StringVar(&waitFor, "wait", "", "wait until the message reaches this rung: "+strings.Join(wire.Rungs, ", "))
	cmd.PersistentFlags().DurationVar(&timeout, "timeout", 30*time.Second, "how long --wait waits")
	cmd.PersistentFlags().StringVar(&file, "file", "", "read the message from this `file` instead of the words after the target")
	cmd.PersistentFlags().StringVar(&msgID, "id", "", "the message's `id` (default a fresh one): a send again with the id of one that was not confirmed is stored once")
	print := func(r mesh.Receipt, head string, progress []mesh.Progress, reached bool, sent time.Time) {
		if asJSON {
			out := any(r)
			if waitFor != "" {
				out = struct {
					mesh.Receipt
					Wait     string          `json:"wait"`
					Reached  bool            `json:"reached"`
					Progress []mesh.Progress `json:"progress"`
				}{r, waitFor, reached, progress}
			}
			b, _ := json.MarshalIndent(out, "", "  ")
			fmt.Fprintln(g.stdout, string(b))
			return
		}
		// Names in a receipt come from peers (the roster, their
		// connectors' notes): shown inert like any peer text.
		fmt.Fprintf(g.stdout, "%s: %s\n", wire.Inert(head), wire.Inert(r.String()))
		for _, p := range progress {
			fmt.Fprintln(g.stdout, "  "+wire.Inert(describeProgress(p, sent)))
		}
		if waitFor != "" && !reached {
			fmt.Fprintf(g.stderr, "gave up after %s: not every recipient reached %s\n", timeout, waitFor)
		}
	}
	// sendCmd is one of the three send verbs: it connects as a one-shot
	// endpoint, sends, and prints the receipt; with --wait it follows the
	// message first.
	sendCmd := func(use, short string, send func(ctx context.Context, e *mesh.Endpoint, to, text string, opts ...mesh.SendOption) (mesh.Receipt, error), head func(mesh.Receipt) string) *cobra.Command {
		return &cobra.Command{
			Use: use, Short: short, Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if waitFor != "" && wire.RungRank(waitFor) == 0 {
					return usageError{fmt.Errorf("--wait %q: not a rung (one of %s)", waitFor, strings.Join(wire.Rungs, ", "))}
				}
				if timeout <= 0 {
					return usageError{fmt.Errorf("--timeout must be positive")}
				}
				text, err := messageBody(g, cmd, args[1:], file)
				if err != nil {
					return err
				}
				limit := 10 * time.Second
				if waitFor != "" {
					limit += timeout
				}
				ctx, cancel := context.WithTimeout(context.Background(), limit)
				defer cancel()
				if msgID != "" && !wire.TokenID(msgID) {
					return usagef("--id %q: an id is 1 to 64 of A-Z a-z 0-9 - _ (the one an unconfirmed send named)", msgID)
				}
				// A send reads no channel: it joins none (a join it never
				// asked for would be what fails when the mesh is going).
				e, err := g.endpoint(ctx, mesh.Options{OneShot: true, Subscribe: []string{}})
				if err != nil {
					return err
				}
				defer e.Close()
				var w *mesh.ReceiptWatch
				if waitFor != "" {
					if w, err = e.WatchReceipts(); err != nil {
						return err
					}
					defer w.Close()
				}
				maxPayload := e.Conn().MaxPayload()
				if encodedSize(text) > maxPayload {
					return tooLarge(cmd, text, maxPayload)
				}
				sent := time.Now()
				r, err := send(ctx, e, args[0], text, idOption(msgID))
				if errors.Is(err, nats.ErrMaxPayload) {
					return tooLarge(cmd, text, maxPayload) // the envelope tipped it over; nats.go sent nothing
				}
				if err != nil {
					return sendError(err)
				}
				if warning := sendWarning(ctx, e, r, g.readsStorage()); warning != "" {
					defer fmt.Fprintln(g.stderr, warning)
				}
				if w == nil {
					print(r, head(r), nil, true, sent)
					return nil
				}
				want := 1
				if r.Kind == wire.KindChannel {
					if want = len(r.Mentions); want == 0 {
						return usageError{fmt.Errorf("--wait follows a DM, a task, or a post's @mentions: this post mentions nobody (it was sent: %s)", r)}
					}
				}
				if !asJSON && timeout > 2*time.Second {
					fmt.Fprintf(g.stderr, "sent; waiting up to %s for %s...\n", timeout, waitFor)
				}
				wctx, wcancel := context.WithTimeout(ctx, timeout)
				defer wcancel()
				progress := w.Wait(wctx, r.ID, waitFor, want, nil)
				reached := countReached(progress, waitFor) >= want
				if !reached {
					progress = explainWaiting(ctx, e, r, progress)
				}
				print(r, head(r), progress, reached, sent)
				if !reached {
					return exitError{exitFail}
				}
				return nil
			},
		}
	}
	msg := sendCmd("msg <channel> <text...>", "Post to a channel (multicast)",
		func(ctx context.Context, e *mesh.Endpoint, ch, text string, opts ...mesh.SendOption) (mesh.Receipt, error) {
			return e.Send(ctx, ch, text, append(opts, mesh.WithMentions(mentions...))...)
		}, func(r mesh.Receipt) string { return "sent to #" + r.Channel })
	msg.Flags().StringSliceVar(&mentions, "mention", nil, "@mention a peer by name (repeatable)")
	dm := sendCmd("dm <name|id> <text...>", "Send a direct message to one peer (unicast)",
		func(ctx context.Context, e *mesh.Endpoint, to, text string, opts ...mesh.SendOption) (mesh.Receipt, error) {
			return e.DM(ctx, to, text, opts...)
		}, func(r mesh.Receipt) string { return "DM to " + r.ToName })
	ask := sendCmd("ask <role> <text...>", "Send a task to any one holder of a role (anycast)",
		func(ctx context.Context, e *mesh.Endpoint, role, text string, opts ...mesh.SendOption) (mesh.Receipt, error) {
			return e.Ask(ctx, role, text, opts...)
		}, func(r mesh.Receipt) string { return "asked @" + r.ToService })
	cmd.AddCommand(msg, dm, ask)
	return cmd
}

func countReached(progress []mesh.Progress, rung string) int {
	n := 0
	for _, p := range progress {
		if p.Reaches(rung) {
			n++
		}
	}
	return n
}

// explainWaiting fills in why a message nobody took yet waits: for a DM,
// how its recipient looks on the roster now.
func explainWaiting(ctx context.Context, e *mesh.Endpoint, r mesh.Receipt, progress []mesh.Progress) []mesh.Progress {
	if r.Kind != wire.KindDM || len(progress) != 1 || progress[0].To != "" {
		return progress
	}
	p := &progress[0]
	p.To = r.To
	peer, err := e.ResolvePeer(ctx, r.To)
	switch {
	case err != nil:
		p.Why = "recipient's state unknown: " + err.Error()
	case peer.Status == "offline" || peer.Status == "":
		p.Why = "recipient offline: its connector takes it when it comes back"
	default:
		p.Why = "recipient " + peer.Status + ", but its connector has not taken it (its inbox may be full)"
	}
	return progress
}

// describeProgress is one recipient's line under a receipt.
func describeProgress(p mesh.Progress, sent time.Time) string {
	who := p.To
	if who == "" {
		who = "the recipient"
	} else if pr, err := wire.ParsePrincipal(who); err == nil {
		who = pr.Actor
	}
	s := who + ": reached " + p.Reached
	if p.Latest != "" && p.Latest != p.Reached {
		s += ", then back at " + p.Latest
	}
	if p.Why != "" {
		s += " (" + p.Why + ")"
	}
	if !p.At.IsZero() {
		s += fmt.Sprintf(", %s after send", p.At.Sub(sent).Round(time.Millisecond))
	}
	return s
}

// itemJSON is one inbox item in `cotal inbox --json`.
type itemJSON struct {
	Kind       wire.Kind     `json:"kind"`
	Seq        uint64        `json:"seq,omitempty"`
	Historical bool          `json:"historical"`
	Durable    bool          `json:"durable"`
	Received   time.Time     `json:"received"`
	Message    *wire.Message `json:"message"`
}

func newInboxCmd(g *globals) *cobra.Command {
	var (
		peek   bool
		wait   time.Duration
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "inbox",
		Short: "Show what is waiting for this identity: DMs and tasks first, then channel posts",
		Long: `Show what is waiting for this identity (the local operator, or --creds):
DMs and anycast tasks first, then channel posts. Each item is acknowledged only
once it has been printed; --peek acknowledges nothing, so the items come again.

Channel posts on live channels reach a one-shot command only while it runs:
use --wait to listen for a while.

Inside a seat it reads the seat's own inbox as a model's cotal_inbox does: at
most 48 000 characters a read, clearing only what it printed, and it says how
many are left for the next read.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.inSeat() != "" {
				return seatInbox(g, peek, asJSON)
			}
			ctx, cancel := context.WithTimeout(context.Background(), wait+10*time.Second)
			defer cancel()
			e, err := g.endpoint(ctx, mesh.Options{OneShot: true})
			if err != nil {
				return err
			}
			defer e.Close()
			if wait > 2*time.Second && !asJSON {
				fmt.Fprintf(g.stderr, "waiting up to %s for messages...\n", wait)
			}
			handled := handledFile(g, e)
			e.AssumeHandled(readHandled(handled))
			items, err := e.Collect(ctx, wait)
			if err != nil {
				return err
			}
			if asJSON {
				out := make([]itemJSON, len(items))
				for i, it := range items {
					out[i] = itemJSON{Kind: it.Kind, Seq: it.Seq, Historical: it.Historical, Durable: it.Durable, Received: it.Received, Message: &it.Msg}
				}
				b, _ := json.MarshalIndent(out, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
			} else if len(items) == 0 {
				fmt.Fprintln(g.stdout, "Inbox empty, no new messages.")
			} else {
				for _, it := range items {
					fmt.Fprintln(g.stdout, render.Item(it.Kind, it.Subject, it.Msg, it.Historical, e.Me()))
				}
			}
			var ackErr error
			for _, it := range items {
				if peek {
					_ = it.Release()
				} else if err := it.Ack(); err != nil && ackErr == nil {
					ackErr = fmt.Errorf("printed, but the ack failed, so it will come again: %w", err)
				}
			}
			if !peek && len(items) > 0 {
				writeHandled(g, handled, e.Handled())
			}
			if n := e.Rejected(); len(n) > 0 {
				fmt.Fprintf(g.stderr, "dropped %s\n", describeRejected(n))
			}
			return ackErr
		},
	}
	cmd.Flags().BoolVar(&peek, "peek", false, "show without acknowledging")
	cmd.Flags().DurationVar(&wait, "wait", 0, "when nothing is waiting, wait this long for the first arrival")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the items as JSON")
	return cmd
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

func newRosterCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "roster",
		Short: "List the peers of the space, with the age of every fact",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ctx, cancel := ctxTimeout()
			defer cancel()
			e, err := g.endpoint(ctx, mesh.Options{OneShot: true})
			if err != nil {
				return err
			}
			defer e.Close()
			peers, view, err := e.Roster(ctx)
			if err != nil {
				return err
			}
			now := time.Now()
			if !asJSON {
				fmt.Fprint(g.stdout, render.Roster(peers, view, now))
				return nil
			}
			rows := make([]peerJSON, len(peers))
			for i, p := range peers {
				rows[i] = peerJSON{
					ID: p.ID, Name: p.Name, Role: p.Role, Status: string(p.Status), OfflineReason: p.OfflineReason,
					Activity: p.Record.Activity, Attention: string(p.Record.Attention), LifecycleUID: p.Record.LifecycleUID,
					StatusAge: ageSeconds(now, p.StatusSince), HeardAge: ageSeconds(now, p.Heard()),
				}
			}
			b, _ := json.MarshalIndent(map[string]any{
				"view": view.State, "fresh": view.Fresh, "staleSince": view.StaleSince, "peers": rows,
			}, "", "  ")
			fmt.Fprintln(g.stdout, string(b))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the roster as JSON")
	return cmd
}

func ageSeconds(now, t time.Time) float64 {
	if t.IsZero() {
		return -1
	}
	return now.Sub(t).Round(time.Millisecond).Seconds()
}

// describeRejected says how many deliveries the receive pipeline refused
// and why, e.g. "2 deliveries as forged or malformed (sender-mismatch: 2)".
func describeRejected(n map[wire.Reject]int) string {
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

// handledFile is where one-shot inbox reads of an identity lifecycle keep
// what they handed over ("" when the space has no store here). The broker
// confirms an ack before its disk has it, so after a crash of the mesh it
// may hand a read copy out again; the next read acks it silently instead.
func handledFile(g *globals, e *mesh.Endpoint) string {
	_, p, _, err := g.paths()
	if err != nil || p.Space != e.Space() || p.StoreDir == "" {
		return ""
	}
	if _, err := os.Stat(p.StoreDir); err != nil {
		return ""
	}
	return filepath.Join(p.StoreDir, "handled", e.Me().ID()+"."+e.LifecycleUID()+".json")
}

func readHandled(path string) []string {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var keys []string
	_ = json.Unmarshal(b, &keys)
	return keys
}

// writeHandled keeps the hand-overs for the next read; failing to is only
// worth a warning: the worst case is a repeat after a crash.
func writeHandled(g *globals, path string, keys []string) {
	if path == "" {
		return
	}
	b, _ := json.Marshal(keys)
	err := config.EnsureDir(filepath.Dir(path), 0o700)
	if err == nil {
		err = config.WriteFileAtomic(path, b, 0o600)
	}
	if err != nil {
		fmt.Fprintf(g.stderr, "cotal: could not note what was read (%v); after a mesh crash some of it may come again\n", err)
	}
}
