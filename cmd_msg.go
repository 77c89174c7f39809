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

// sendError turns a send failure into the right exit code: a refused
// target or ACL is the user's input.
func sendError(err error) error {
	for _, target := range []error{mesh.ErrNoPeer, mesh.ErrAmbiguous, mesh.ErrNoDefaultChannel, wire.ErrInvalidChannel, wire.ErrWildcardTarget} {
		if errors.Is(err, target) {
			return usageError{err}
		}
	}
	return err
}

func newSendCmd(g *globals) *cobra.Command {
	var asJSON bool
	var mentions []string
	cmd := &cobra.Command{
		Use:   "send",
		Short: "Send a channel post, a DM or an anycast task",
		Long: `Send as the local operator, or as --creds / COTAL_CREDS.

A receipt says where the message was stored and how the recipient looked at
send time; it never claims delivery.`,
	}
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print the receipt as JSON")
	print := func(r mesh.Receipt, head string) {
		if asJSON {
			b, _ := json.MarshalIndent(r, "", "  ")
			fmt.Fprintln(g.stdout, string(b))
			return
		}
		fmt.Fprintf(g.stdout, "%s: %s\n", head, r)
	}
	// sendCmd is one of the three send verbs: it connects as a one-shot
	// endpoint, sends, and prints the receipt.
	sendCmd := func(use, short string, send func(ctx context.Context, e *mesh.Endpoint, to, text string) (mesh.Receipt, error), head func(mesh.Receipt) string) *cobra.Command {
		return &cobra.Command{
			Use: use, Short: short, Args: cobra.MinimumNArgs(2),
			RunE: func(_ *cobra.Command, args []string) error {
				return g.oneShot(func(ctx context.Context, e *mesh.Endpoint) error {
					r, err := send(ctx, e, args[0], strings.Join(args[1:], " "))
					if err != nil {
						return sendError(err)
					}
					print(r, head(r))
					return nil
				})
			},
		}
	}
	msg := sendCmd("msg <channel> <text...>", "Post to a channel (multicast)",
		func(ctx context.Context, e *mesh.Endpoint, ch, text string) (mesh.Receipt, error) {
			return e.Send(ctx, ch, text, mesh.WithMentions(mentions...))
		}, func(r mesh.Receipt) string { return "sent to #" + r.Channel })
	msg.Flags().StringSliceVar(&mentions, "mention", nil, "@mention a peer by name (repeatable)")
	dm := sendCmd("dm <name|id> <text...>", "Send a direct message to one peer (unicast)",
		func(ctx context.Context, e *mesh.Endpoint, to, text string) (mesh.Receipt, error) {
			return e.DM(ctx, to, text)
		}, func(r mesh.Receipt) string { return "DM to " + r.ToName })
	ask := sendCmd("ask <role> <text...>", "Send a task to any one holder of a role (anycast)",
		func(ctx context.Context, e *mesh.Endpoint, role, text string) (mesh.Receipt, error) {
			return e.Ask(ctx, role, text)
		}, func(r mesh.Receipt) string { return "asked @" + r.ToService })
	cmd.AddCommand(msg, dm, ask)
	return cmd
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
use --wait to listen for a while.`,
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
					StatusAge: ageSeconds(now, p.StatusSince), HeardAge: ageSeconds(now, p.LastHeard),
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
