package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat/client"
)

// Limits of `cotal hook`. A hook must never break the harness's session:
// whatever fails, it prints nothing and exits 0 within its time.
const (
	hookReadWait = 5 * time.Second        // reading the harness's input
	hookCallWait = 10 * time.Second       // one answer from the seat's connector
	hookJoinWait = 3 * time.Second        // a connector still joining is asked again this long
	hookDoneWait = 2 * time.Second        // saying how it ended
	hookRetry    = 100 * time.Millisecond // between asks of a joining connector
	hookEndWait  = time.Second            // the whole of a SessionEnd hook: its harness is exiting
	hookOrphan   = 100 * time.Millisecond // how often it looks whether its harness is still there
)

func newHookCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "hook <event>",
		Short: "Inside a seat: what the harness's hooks run (Claude Code's settings call it for each event)",
		Long: `Run by a seat's harness for one of its hook events, with the event's JSON
on stdin: it hands the event to the seat's connector (through the manager
hosting the seat, as the seat) and prints what the hook answers: the
messages waiting for the model as added context, a person's approve or deny
for a permission prompt. It never breaks the harness's session: on any
failure it prints nothing, exits 0, and says why on stderr and, when it can,
in the manager's log. Outside a seat it does nothing.`,
		Args: cobra.ExactArgs(1),
		// Its creds are read when it runs, so a bad one is reported, not
		// an exit status the harness would show.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(_ *cobra.Command, args []string) error {
			runHook(g, args[0])
			return nil
		},
	}
}

// runHook is one hook event, end to end; it never fails.
func runHook(g *globals, event string) {
	fail := func(format string, a ...any) {
		fmt.Fprintf(g.stderr, "cotal hook %s: %s\n", event, fmt.Sprintf(format, a...))
	}
	input, err := readHookInput(g.stdin)
	if err != nil {
		fail("%v", err)
		return
	}
	if g.inSeat() == "" {
		fail("not inside a seat (no COTAL_MANAGER_INSTANCE and COTAL_CREDS): nothing to do")
		return
	}
	if _, err := loadCreds(g.creds, "COTAL_CREDS"); err != nil {
		fail("%v", err)
		return
	}
	cl, nc, err := g.managers()
	if err != nil {
		fail("reaching the mesh: %v", err)
		return
	}
	defer nc.Close()
	self := cl.Self(g.inSeat())
	report := func(why string) {
		fail("%s", why)
		ctx, cancel := context.WithTimeout(context.Background(), hookDoneWait)
		defer cancel()
		b, _ := json.Marshal(event + ": " + why)
		_, _ = self.Hook(ctx, client.HookArgs{Event: "report", Input: b})
	}
	// The harness stops a hook it no longer needs (a permission prompt
	// answered at the terminal): say so, print nothing.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	if event == "SessionEnd" {
		// Its harness is exiting and waits for it only a moment.
		ctx, cancel = context.WithTimeout(context.Background(), hookEndWait)
	}
	defer cancel()
	stopped := make(chan string, 1)
	parent := os.Getppid()
	go func() {
		t := time.NewTicker(hookOrphan)
		defer t.Stop()
		for {
			select {
			case sig := <-sigs:
				stopped <- "stopped by " + sig.String()
				cancel()
				return
			case <-t.C:
				// A harness that went away reads no output: the hook ends
				// with it instead of outliving it.
				if os.Getppid() != parent {
					stopped <- "its harness exited"
					cancel()
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()

	r, err := hookCall(ctx, self, client.HookArgs{Event: event, Input: input})
	for err == nil && r.Waiting {
		var w client.HookReply
		w, err = waitCall(ctx, self, r.Token)
		if w.Token == "" {
			w.Token = r.Token
		}
		r = w
	}
	if err != nil {
		select {
		case why := <-stopped:
			done(self, client.HookDoneArgs{Token: r.Token, Why: why})
		default:
			if ctx.Err() != nil { // out of time: saying so would take longer still
				fail("its seat's connector did not answer in time: %v", err)
				return
			}
			report(fmt.Sprintf("its seat's connector did not answer: %v", err))
		}
		return
	}
	if r.Output == "" {
		return
	}
	if _, err := io.WriteString(g.stdout, r.Output); err != nil {
		done(self, client.HookDoneArgs{Token: r.Token, Why: "writing its output: " + err.Error()})
		report(fmt.Sprintf("writing its output: %v", err))
		return
	}
	if f, ok := g.stdout.(*os.File); ok {
		_ = f.Sync()
	}
	if r.Token != "" {
		done(self, client.HookDoneArgs{Token: r.Token, Written: true})
	}
}

// readHookInput reads the hook's JSON from stdin, bounded in size and time.
func readHookInput(r io.Reader) (json.RawMessage, error) {
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, client.MaxHookInput+1))
		ch <- result{b, err}
	}()
	var res result
	select {
	case res = <-ch:
	case <-time.After(hookReadWait):
		return nil, fmt.Errorf("its input did not end within %s", hookReadWait)
	}
	switch {
	case res.err != nil:
		return nil, fmt.Errorf("reading its input: %v", res.err)
	case len(res.b) > client.MaxHookInput:
		return nil, fmt.Errorf("its input is over %d bytes", client.MaxHookInput)
	case !json.Valid(res.b):
		return nil, errors.New("its input is not JSON")
	}
	return json.RawMessage(res.b), nil
}

// hookCall hands the event over; a connector still joining (the seat has
// just started) is asked again for a moment.
func hookCall(ctx context.Context, self client.Self, a client.HookArgs) (client.HookReply, error) {
	deadline := time.Now().Add(hookJoinWait)
	for {
		cctx, cancel := context.WithTimeout(ctx, hookCallWait)
		r, err := self.Hook(cctx, a)
		cancel()
		if e := ep.AsError(err); e != nil && e.Code == ep.CodeUnavailable && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(hookRetry)
			continue
		}
		return r, err
	}
}

// waitCall asks again for the answer a hook waits on; one wait is bounded
// by the manager, the call a little past it.
func waitCall(ctx context.Context, self client.Self, token string) (client.HookReply, error) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return self.HookWait(cctx, token)
}

// done says how the hook ended; it cannot fail the hook.
func done(self client.Self, a client.HookDoneArgs) {
	if a.Token == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), hookDoneWait)
	defer cancel()
	_ = self.HookDone(ctx, a)
}
