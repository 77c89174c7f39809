package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// A hook must never break its harness's session: whatever fails, `cotal
// hook` prints nothing and exits 0 within its time. RunHook is its whole
// conversation with the seat's connector.

// Limits of one hook event.
const (
	hookReadWait = 5 * time.Second        // reading the harness's input
	hookCallWait = 10 * time.Second       // one answer from the seat's connector
	hookJoinWait = 3 * time.Second        // a connector still joining is asked again this long
	hookDoneWait = 2 * time.Second        // saying how it ended
	hookRetry    = 100 * time.Millisecond // between asks of a joining connector
	hookEndWait  = time.Second            // the whole of a SessionEnd hook: its harness is exiting
	hookOrphan   = 100 * time.Millisecond // how often it looks whether its harness is still there
	hookWaitCall = 30 * time.Second       // one hook-wait: the manager bounds the wait, the call a little past it
)

// errHarnessGone ends a hook whose harness exited: nothing reads its
// output any more.
var errHarnessGone = errors.New("its harness exited")

// ReadHookInput reads a hook's JSON from its harness, bounded in size and
// time.
func ReadHookInput(r io.Reader) (json.RawMessage, error) {
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, MaxHookInput+1))
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
	case len(res.b) > MaxHookInput:
		return nil, fmt.Errorf("its input is over %d bytes", MaxHookInput)
	case !json.Valid(res.b):
		return nil, errors.New("its input is not JSON")
	}
	return json.RawMessage(res.b), nil
}

// RunHook hands one hook event of the seat's harness to its connector,
// waits as long as the connector says the hook waits (a permission prompt
// a person answers), writes what the hook answers to out and says how it
// ended. ctx ending stops it (its cause, such as the signal the harness
// stopped the hook with, is told to the connector); so does the harness
// exiting, which it watches for. The error, if any, is for the hook's
// stderr: the connector was told too where it could be.
func (s Self) RunHook(ctx context.Context, event string, input json.RawMessage, out io.Writer) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go watchParent(ctx, cancel)
	var err error
	s.runHook(ctx, event, input, func(output string) error {
		if _, err := io.WriteString(out, output); err != nil {
			return err
		}
		if f, ok := out.(*os.File); ok {
			_ = f.Sync()
		}
		return nil
	}, func(f func()) { f() }, func(e error) { err = e })
	return err
}

// runHook is one hook event: handed to the connector before it returns,
// then waited on, its output given to write (only when there is some) and
// how it ended told to the connector; finish gets the error, if any, once.
// When the connector says the hook waits (a permission prompt its person
// answers), all after the handing over runs in what apart is given: at
// once for a hook of its own, beside the events after it for a stream.
func (s Self) runHook(ctx context.Context, event string, input json.RawMessage, write func(string) error, apart func(func()), finish func(error)) {
	stop := context.CancelFunc(func() {})
	if event == "SessionEnd" {
		// Its harness is exiting and waits for it only a moment.
		ctx, stop = context.WithTimeout(ctx, hookEndWait)
	}
	r, err := s.askHook(ctx, HookArgs{Event: event, Input: input})
	end := func() {
		defer stop()
		finish(s.endHook(ctx, event, r, err, write))
	}
	if err == nil && r.Waiting {
		apart(end)
		return
	}
	end()
}

// endHook is a hook event after its handing over (r, err): the waits, the
// output and how it ended.
func (s Self) endHook(ctx context.Context, event string, r HookReply, err error, write func(string) error) error {
	report := func(why string) error {
		rctx, cancel := context.WithTimeout(context.Background(), hookDoneWait)
		defer cancel()
		b, _ := json.Marshal(event + ": " + why)
		_, _ = s.Hook(rctx, HookArgs{Event: "report", Input: b})
		return errors.New(why)
	}
	for err == nil && r.Waiting {
		var w HookReply
		wctx, stop := context.WithTimeout(ctx, hookWaitCall)
		w, err = s.HookWait(wctx, r.Token)
		stop()
		if w.Token == "" {
			w.Token = r.Token
		}
		r = w
	}
	if err != nil {
		cause := context.Cause(ctx)
		switch {
		case cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded):
			s.hookDone(HookDoneArgs{Token: r.Token, Why: cause.Error()})
			return nil
		case ctx.Err() != nil: // out of time: saying so would take longer still
			return fmt.Errorf("its seat's connector did not answer in time: %v", err)
		}
		return report(fmt.Sprintf("its seat's connector did not answer: %v", err))
	}
	if r.Output == "" {
		return nil
	}
	if err := write(r.Output); err != nil {
		s.hookDone(HookDoneArgs{Token: r.Token, Why: "writing its output: " + err.Error()})
		return report(fmt.Sprintf("writing its output: %v", err))
	}
	s.hookDone(HookDoneArgs{Token: r.Token, Written: true})
	return nil
}

// watchParent ends the hook when its harness goes away: a harness that
// exited reads no output, and the hook must not outlive it.
func watchParent(ctx context.Context, cancel context.CancelCauseFunc) {
	parent := os.Getppid()
	t := time.NewTicker(hookOrphan)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if os.Getppid() != parent {
				cancel(errHarnessGone)
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// askHook hands the event over; a connector still joining (the seat has
// just started) is asked again for a moment.
func (s Self) askHook(ctx context.Context, a HookArgs) (HookReply, error) {
	deadline := time.Now().Add(hookJoinWait)
	for {
		cctx, cancel := context.WithTimeout(ctx, hookCallWait)
		r, err := s.Hook(cctx, a)
		cancel()
		if e := proto.AsError(err); e != nil && e.Code == proto.CodeUnavailable && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(hookRetry) // the connector gives no signal to wait on
			continue
		}
		return r, err
	}
}

// hookDone says how the hook ended; it cannot fail the hook.
func (s Self) hookDone(a HookDoneArgs) {
	if a.Token == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), hookDoneWait)
	defer cancel()
	_ = s.HookDone(ctx, a)
}
