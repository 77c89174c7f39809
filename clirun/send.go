package clirun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// SendRequest is one send verb's input: a channel post (wire.KindChannel),
// a DM (KindDM) or a task for a role (KindAnycast).
type SendRequest struct {
	Kind     wire.Kind
	To       string
	Mentions []string // a post's @mentions
	Wait     string   // the rung to follow the message to; "" sends only
	Timeout  time.Duration
	ID       string // the message's id; "" for a fresh one
	// Body reads the message's text; it is called once the flags are
	// found good, so a refusal reads no standard input.
	Body func() (string, error)
	// Cmd names the command in a refusal ("send dm").
	Cmd string
	// Waiting, when set, is told when the message is stored and the wait
	// for Wait begins.
	Waiting func(timeout time.Duration, rung string)
}

// Sent is what a send did: the receipt and, with a wait, how far the
// message got.
type Sent struct {
	Receipt  mesh.Receipt
	At       time.Time // when it was sent
	Wait     string
	Timeout  time.Duration
	Progress []mesh.Progress
	Reached  bool          // every recipient reached Wait (true when not waiting)
	Unheard  *mesh.Unheard // the recipients nobody heard at send time, or nil
}

// Send connects as a one-shot endpoint and sends; with a wait it follows
// the message to its rung. Bad flags, a refused target and a message the
// mesh cannot take are bad input; a Sent comes back with its Unheard even
// when a later step fails.
func Send(c Caller, r SendRequest) (Sent, error) {
	switch {
	case r.Wait != "" && wire.RungRank(r.Wait) == 0:
		return Sent{}, usagef("--wait %q: not a rung (one of %s)", r.Wait, strings.Join(wire.Rungs, ", "))
	case r.Timeout <= 0:
		return Sent{}, usagef("--timeout must be positive")
	}
	text, err := r.Body()
	if err != nil {
		return Sent{}, err
	}
	if r.ID != "" && !wire.TokenID(r.ID) {
		return Sent{}, usagef("--id %q: an id is 1 to 64 of A-Z a-z 0-9 - _ (the one an unconfirmed send named)", r.ID)
	}
	limit := Timeout
	if r.Wait != "" {
		limit += r.Timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	// A send reads no channel: it joins none (a join it never asked for
	// would be what fails when the mesh is going).
	e, err := c.Endpoint(ctx, mesh.Options{OneShot: true, Subscribe: []string{}})
	if err != nil {
		return Sent{}, err
	}
	defer e.Close()
	var w *mesh.ReceiptWatch
	if r.Wait != "" {
		if w, err = e.WatchReceipts(); err != nil {
			return Sent{}, err
		}
		defer w.Close()
	}
	if err := e.CheckSize(text); err != nil {
		return Sent{}, usagef("%s: %v", r.Cmd, err)
	}
	s := Sent{At: time.Now(), Wait: r.Wait, Timeout: r.Timeout, Reached: true}
	if s.Receipt, err = sendOne(ctx, e, r, text); err != nil {
		return s, err
	}
	s.Unheard = e.Unheard(ctx, s.Receipt)
	if w == nil {
		return s, nil
	}
	want := 1
	if s.Receipt.Kind == wire.KindChannel {
		if want = len(s.Receipt.Mentions); want == 0 {
			return s, usagef("--wait follows a DM, a task, or a post's @mentions: this post mentions nobody (it was sent: %s)", s.Receipt)
		}
	}
	if r.Waiting != nil {
		r.Waiting(r.Timeout, r.Wait)
	}
	wctx, wcancel := context.WithTimeout(ctx, r.Timeout)
	defer wcancel()
	s.Progress = w.Wait(wctx, s.Receipt.ID, r.Wait, want, nil)
	if s.Reached = mesh.CountReached(s.Progress, r.Wait) >= want; !s.Reached {
		s.Progress = e.ExplainWaiting(ctx, s.Receipt, s.Progress)
	}
	return s, nil
}

// sendOne sends text by r's verb.
func sendOne(ctx context.Context, e *mesh.Endpoint, r SendRequest, text string) (mesh.Receipt, error) {
	var opts []mesh.SendOption
	if r.ID != "" {
		opts = append(opts, mesh.WithID(r.ID))
	}
	var rc mesh.Receipt
	var err error
	switch r.Kind {
	case wire.KindChannel:
		rc, err = e.Send(ctx, r.To, text, append(opts, mesh.WithMentions(r.Mentions...))...)
	case wire.KindDM:
		rc, err = e.DM(ctx, r.To, text, opts...)
	default:
		rc, err = e.Ask(ctx, r.To, text, opts...)
	}
	var big *mesh.TooLargeError
	if err = e.AsTooLarge(err); errors.As(err, &big) {
		return rc, usagef("%s: %v", r.Cmd, err)
	}
	return rc, SendError(err)
}

// SendError gives a send failure its exit code and words: a refused
// target or ACL is the user's input; an unconfirmed send says how to
// retry it.
func SendError(err error) error {
	var nc *mesh.NotConfirmedError
	if errors.As(err, &nc) {
		return fmt.Errorf("%w; send it again with --id %s and the mesh stores it once", err, nc.ID)
	}
	if mesh.BadTarget(err) {
		return bad(err)
	}
	return err
}
