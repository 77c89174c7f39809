package ep_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// TestConformanceInstanceAddressingUnpinnedCallCarriesItsIncarnation: the
// control-surface page: the resolve and the invoke are separate trips
// through the same queue, so every call carries the incarnation it
// resolved against, and an instance that is not it refuses before running
// (not-executed), after which the call is re-described and re-issued. An
// unpinned call carried no bind, so it ran on whichever instance it landed.
func TestConformanceInstanceAddressingUnpinnedCallCarriesItsIncarnation(t *testing.T) {
	h := newHarness(t)
	a := h.start("inst-a")
	c := h.client()
	if _, err := c.Call(ctxT(t), endpoint, "echo", map[string]string{"text": "resolve"}); err != nil {
		t.Fatal(err)
	}
	// The client resolved inst-a; inst-b is now the only one on the rail.
	b := h.start("inst-b")
	a.kill()
	requests := h.tap("cotal." + space + ".ep.one." + "test_echo" + ".count.>")
	replies := h.tap("cotal." + space + ".ep.reply.>")
	res, err := c.Call(ctxT(t), endpoint, "count", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Attempts != 2 || res.Responder.InstanceID != "inst-b" {
		t.Fatalf("attempts %d, responder %+v; want the call refused by inst-b once, then re-issued to it", res.Attempts, res.Responder)
	}
	if n := b.casts.Load(); n != 1 {
		t.Fatalf("inst-b ran the command %d times, want once: the refused attempt must not run", n)
	}
	// The tap's handler runs apart from the call: wait for both attempts
	// to reach it, then require no third.
	var reqs []*nats.Msg
	waitFor(t, func() error {
		if reqs = requests.All(); len(reqs) < 2 {
			return fmt.Errorf("%d requests published, want 2", len(reqs))
		}
		return nil
	})
	_ = h.op.Flush()
	if reqs = requests.All(); len(reqs) != 2 {
		t.Fatalf("%d requests published, want 2", len(reqs))
	}
	var first proto.EndpointRequest
	if err := json.Unmarshal(reqs[0].Data, &first); err != nil {
		t.Fatal(err)
	}
	if first.Bind == nil || first.Bind.InstanceID != "inst-a" {
		t.Fatalf("the first attempt carried bind %+v, want the resolved inst-a", first.Bind)
	}
	var refusal proto.EndpointReply
	for _, m := range replies.All() {
		var r proto.EndpointReply
		if json.Unmarshal(m.Data, &r) == nil && r.ID == first.ID && !r.OK {
			refusal = r
		}
	}
	if refusal.Error == nil || refusal.Error.Code != proto.CodeFailedPrecondition || refusal.Error.Outcome != proto.NotExecuted || !refusal.Error.HasDetail(proto.BindRefusedKind) {
		t.Fatalf("inst-b's answer to the misrouted attempt: %+v; want a not-executed bind refusal", refusal.Error)
	}
}
