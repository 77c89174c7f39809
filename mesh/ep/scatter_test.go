package ep_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestScatterAttribution: two instances, one killed: the live one is counted, the dead one is missing and probed gone; the deadline is not waited out (checklist 24, 25, 27).
func TestScatterAttribution(t *testing.T) {
	h := newHarness(t)
	a := h.start("inst-a")
	b := h.start("inst-b")
	c := h.client()
	res, err := c.Scatter(ctxT(t), endpoint, "echo", map[string]string{"text": "all"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Replies) != 2 || len(res.Missing) != 0 {
		t.Fatalf("both alive: %+v", res)
	}
	b.kill()
	start := time.Now()
	res, err = c.Scatter(ctxT(t), endpoint, "echo", map[string]string{"text": "all"}, ep.Timeout(8*time.Second), ep.ProbeAfter(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || len(res.Replies) != 1 || res.Replies[0].InstanceID != "inst-a" || res.Replies[0].Epoch != a.srv.Epoch() {
		t.Fatalf("replies %+v", res)
	}
	if len(res.Missing) != 1 || res.Missing[0].InstanceID != "inst-b" || res.Missing[0].Liveness != ep.Gone {
		t.Fatalf("missing %+v", res.Missing)
	}
	if waited := time.Since(start); waited > 4*time.Second {
		t.Fatalf("a gone instance cost the deadline: %s", waited)
	}
	if l, err := c.Probe(ctxT(t), endpoint, "inst-a"); err != nil || l != ep.LivenessUnknown {
		t.Fatalf("probe of a live instance: %v %v", l, err)
	}
	if l, err := c.Probe(ctxT(t), endpoint, "inst-b"); err != nil || l != ep.Gone {
		t.Fatalf("probe of a dead instance: %v %v", l, err)
	}
}

// TestScatterSilentMissingNotGone: without a probe, a dead instance is missing with no verdict; silence alone never says gone (checklist 27).
func TestScatterSilentMissingNotGone(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	b := h.start("inst-b")
	c := h.client()
	if _, err := c.Describe(ctxT(t), endpoint, ""); err != nil {
		t.Fatal(err)
	}
	b.kill()
	res, err := c.Scatter(ctxT(t), endpoint, "echo", map[string]string{"text": "x"}, ep.Timeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Missing) != 1 || res.Missing[0].Liveness != "" || res.Complete {
		t.Fatalf("%+v", res)
	}
}

// TestScatterEmptyRegistry: nothing registered is failed-precondition (checklist 24).
func TestScatterEmptyRegistry(t *testing.T) {
	h := newHarness(t)
	_, err := h.client().Scatter(ctxT(t), endpoint, "echo", nil)
	if e := errCode(t, err); e.Code != proto.CodeFailedPrecondition || e.EffectiveOutcome() != proto.NotExecuted {
		t.Fatalf("got %+v", e)
	}
}

// TestScatterRegistrationChurn: an instance that re-registers before the classification point is churn, uncounted (checklist 26).
func TestScatterRegistrationChurn(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	h.start("inst-b")
	res, err := h.client().Scatter(ctxT(t), endpoint, "rereg", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Replies) != 0 || len(res.Churn) != 2 || res.Churn[0].Reason != ep.ChurnRegistration || res.Churn[0].Reply == nil {
		t.Fatalf("%+v", res)
	}
	if !res.Complete {
		t.Fatalf("churned slots are accounted for, not missing: %+v", res)
	}
}

// TestScatterDeregisteredKeepsReply: an explicit deregistration after the freeze excuses the silent slot (checklist 25).
func TestScatterDeregisteredKeepsReply(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	b := h.start("inst-b")
	c := h.client()
	if _, err := c.Describe(ctxT(t), endpoint, ""); err != nil {
		t.Fatal(err)
	}
	b.kill()
	res, err := c.Scatter(ctxT(t), endpoint, "forget", map[string]string{"instance": "inst-b"}, ep.Timeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Replies) != 1 || res.Replies[0].InstanceID != "inst-a" {
		t.Fatalf("the given reply was not kept: %+v", res)
	}
	if len(res.Missing) != 0 || len(res.Churn) != 1 || res.Churn[0].Reason != ep.ChurnDeregistered || !res.Complete {
		t.Fatalf("%+v", res)
	}
}

// TestRefusedProbeIsPermissionDenied: a probe the broker refuses to publish is permission-denied naming the subject, never a verdict (checklist 28).
func TestRefusedProbeIsPermissionDenied(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	// Every identity may describe as itself; a probe naming another
	// caller is a publish the broker refuses.
	ag := h.agent("prober", wire.ProfileObserver)
	forged := ag.caller()
	forged.Actor = "someone_else"
	c, err := ep.NewClient(ag.nc, ep.ClientOptions{Space: space, Caller: forged})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Probe(ctxT(t), endpoint, "inst-a")
	e := errCode(t, err)
	if e.Code != proto.CodePermissionDenied || !strings.Contains(e.Message, "cotal."+space+".ep.inst.test_echo.inst-a.describe.") || l == ep.Gone {
		t.Fatalf("got %v %+v", l, e)
	}
}

// TestDeregisterInstance: the named refusals of §14, then a revision-pinned delete of a crashed instance (checklist 30).
func TestDeregisterInstance(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	b := h.start("inst-b")
	c := h.client()
	refusal := func(err error) string {
		var r *ep.DeregisterRefusal
		if !errors.As(err, &r) {
			t.Fatalf("want a refusal, got %v", err)
		}
		return r.Reason
	}
	if got := refusal(c.DeregisterInstance(ctxT(t), endpoint, "inst-z")); got != ep.RefusalNotRegistered {
		t.Fatalf("unknown instance: %s", got)
	}
	if got := refusal(c.DeregisterInstance(ctxT(t), endpoint, "inst-a")); got != ep.RefusalInstanceAnswered {
		t.Fatalf("live instance: %s", got)
	}
	b.kill()
	if err := c.DeregisterInstance(ctxT(t), endpoint, "inst-b"); err != nil {
		t.Fatal(err)
	}
	if _, err := ep.ReadRegistration(ctxT(t), h.kv, endpoint, "inst-b"); !errors.Is(err, ep.ErrNotRegistered) {
		t.Fatalf("still registered: %v", err)
	}
	st, _ := h.status("inst-b")
	if st.State != ep.StateExited || st.Epoch != 1 {
		t.Fatalf("status tombstone %+v", st)
	}
	// The next start of that instance still moves the epoch forward.
	if b2 := h.start("inst-b"); b2.srv.Epoch() != 2 {
		t.Fatalf("epoch %d after deregistration", b2.srv.Epoch())
	}
}
