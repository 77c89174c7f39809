package ep_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

type acceptance struct {
	GoalID              string `json:"goalId"`
	Fingerprint         string `json:"fingerprint"`
	ReadinessDeadlineMs int64  `json:"readinessDeadlineMs"`
}

// TestGoalLifecycle: acceptance with a fingerprint, progress on EPE, exactly one create-only terminal fact on EPF read back by goal-result; a reused goal id with other args is a conflict.
func TestGoalLifecycle(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	c := h.client()
	res, err := c.Call(ctxT(t), endpoint, "start", map[string]string{"how": "succeed"}, ep.WithGoal("goal-1"))
	if err != nil {
		t.Fatal(err)
	}
	var acc acceptance
	_ = json.Unmarshal(res.Data, &acc)
	if acc.GoalID != "goal-1" || !proto.ValidDigest(acc.Fingerprint) || acc.ReadinessDeadlineMs != 300 {
		t.Fatalf("acceptance %s", res.Data)
	}
	var r ep.GoalResult
	waitFor(t, func() error {
		got, ok, err := c.GoalResult(ctxT(t), endpoint, "goal-1")
		if err != nil {
			return err
		}
		if !ok {
			return errNot("terminal fact")
		}
		r = got
		return nil
	})
	if r.State != ep.GoalSucceeded || r.Fingerprint != acc.Fingerprint || r.Executor.InstanceID != "inst-a" {
		t.Fatalf("result %+v", r)
	}
	prog, _ := proto.GoalProgressSubject(space, endpoint, "inst-a", 1, testCaller, "goal-1")
	if _, err := h.js.Stream(ctxT(t), wire.EPEStream(space)); err != nil {
		t.Fatal(err)
	}
	s, _ := h.js.Stream(ctxT(t), wire.EPEStream(space))
	if _, err := s.GetLastMsgForSubject(ctxT(t), prog); err != nil {
		t.Fatalf("no progress on %s: %v", prog, err)
	}
	// Other args under the same goal id are a conflict.
	_, err = c.Call(ctxT(t), endpoint, "start", map[string]string{"how": "hang"}, ep.WithGoal("goal-1"))
	if e := errCode(t, err); e.Code != proto.CodeConflict || e.EffectiveOutcome() != proto.NotExecuted {
		t.Fatalf("reused goal id: %+v", e)
	}
	// A second terminal fact loses.
	subj, _ := proto.GoalResultSubject(space, endpoint, testCaller, "goal-1")
	if _, err := h.js.Publish(ctxT(t), subj, []byte(`{}`), jetstream.WithExpectLastSequencePerSubject(0)); err == nil {
		t.Fatal("a second terminal fact was written")
	}
}

// TestGoalReadinessUncertain: a goal that is not ready within its readiness bound ends uncertain, independent of the call's deadline, and a late terminal loses.
func TestGoalReadinessUncertain(t *testing.T) {
	h := newHarness(t)
	a := h.start("inst-a")
	c := h.client()
	if _, err := c.Call(ctxT(t), endpoint, "start", map[string]string{"how": "hang"}, ep.WithGoal("goal-2"), ep.Timeout(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() error {
		r, ok, err := c.GoalResult(ctxT(t), endpoint, "goal-2")
		switch {
		case err != nil:
			return err
		case !ok:
			return errNot("terminal")
		case r.State != ep.GoalUncertain:
			t.Fatalf("state %s", r.State)
		}
		return nil
	})
	_ = a
	if _, ok, err := c.GoalResult(ctxT(t), endpoint, "goal-none"); err != nil || ok {
		t.Fatalf("unknown goal: %v %v", ok, err)
	}
}

// TestGoalReplaySameRequest: the identical request (same id, same args) finds the accepted goal again instead of running twice.
func TestGoalReplaySameRequest(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	c := h.client()
	call := func() acceptance {
		res, err := c.Call(ctxT(t), endpoint, "start", map[string]string{"how": "hang"}, ep.WithGoal("g3"), ep.WithID("req-g3"))
		if err != nil {
			t.Fatal(err)
		}
		var a acceptance
		_ = json.Unmarshal(res.Data, &a)
		return a
	}
	first, second := call(), call()
	if first != second {
		t.Fatalf("%+v != %+v", first, second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := c.Call(ctx, endpoint, "start", map[string]string{"how": "succeed"}, ep.WithGoal("g3"), ep.WithID("req-g3"))
	if e := proto.AsError(err); e == nil || !errors.Is(e, &proto.Error{Code: proto.CodeConflict}) {
		t.Fatalf("%v", err)
	}
}
