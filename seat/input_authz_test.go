package seat_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// rawAgent is an agent's own connection, raw nats.go, with the broker's
// refusals kept.
type rawAgent struct {
	nc     *nats.Conn
	caller proto.Caller
	mu     sync.Mutex
	errs   []string
}

func (h *harness) rawAgent(name string, caps ...string) *rawAgent {
	h.t.Helper()
	cr, err := h.m.Broker().Authority().Mint(broker.Identity{
		Space: space, Principal: wire.Principal{Owner: "local", Actor: name}, AllowPublish: []string{"team"}, Capabilities: caps,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := broker.ProvisionIdentity(ctxT(h.t), h.op, cr.Identity); err != nil {
		h.t.Fatal(err)
	}
	a := &rawAgent{caller: proto.Caller{Owner: cr.Identity.Principal.Owner, Actor: cr.Identity.Principal.Actor, UID: cr.Identity.UID}}
	a.nc, err = nats.Connect(h.m.Broker().URL(), nats.UserJWTAndSeed(cr.JWT, string(cr.Seed)), nats.CustomInboxPrefix(cr.Identity.InboxPrefix()),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			a.mu.Lock()
			a.errs = append(a.errs, err.Error())
			a.mu.Unlock()
		}))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(a.nc.Close)
	return a
}

func (a *rawAgent) refused(subject string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range a.errs {
		if strings.Contains(strings.ToLower(e), "permissions violation") && strings.Contains(e, `"`+subject+`"`) {
			return nil
		}
	}
	return fmt.Errorf("no refusal of %q yet (errors: %v)", subject, a.errs)
}

// TestConformanceSeedInputIsTargetedAndOperatorOnly: the control-surface
// page: input rides the manager.lifecycle capability, targeted with authz
// modes owner and any like attach and despawn, and is granted only to
// operator credentials: an agent that may spawn, attach and despawn its
// seats still may not type into them. It was served untargeted under an
// operator capability ("input operator untargeted").
func TestConformanceSeedInputIsTargetedAndOperatorOnly(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	d, err := h.c.Describe(ctxT(t), wire.ManagerEndpoint, h.iid)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		cmd   string
		modes []proto.Mode
	}{
		{"input", []proto.Mode{proto.ModeOwner, proto.ModeAny}},
		{"keys", []proto.Mode{proto.ModeOwner, proto.ModeAny}},
		{"attach", []proto.Mode{proto.ModeNone, proto.ModeOwner, proto.ModeAny}},
		{"despawn", []proto.Mode{proto.ModeNone, proto.ModeOwner, proto.ModeAny}},
	} {
		c, ok := d.Command(want.cmd)
		if !ok || !c.Targeted || !slices.Equal(c.Modes, want.modes) {
			t.Errorf("describe %s: %+v, want targeted %v", want.cmd, c.CommandInfo, want.modes)
		}
	}
	if c, _ := d.Command("input"); c.Capability != "lifecycle" {
		t.Errorf("input's capability %q, want lifecycle (manager.lifecycle)", c.Capability)
	}

	// A spawn-capable agent and the seat it spawned.
	ag := h.rawAgent("spawner", broker.CapSpawn)
	agent := h.client(ag.nc, ag.caller)
	acc := mustSpawn(t, agent, h.iid, client.SpawnArgs{Persona: "shell"})
	if res := goal(t, agent, h.iid, acc.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
		t.Fatalf("spawn by the agent: %s %+v", res.State, res.Error)
	}

	// The broker carries no input or keys request of the agent's on any
	// rail or in any mode, whatever the target.
	target := proto.Target{Owner: acc.Owner}
	for _, cmd := range []string{"input", "keys"} {
		for _, rq := range []proto.Request{
			{Rail: proto.RailOne},
			{Rail: proto.RailOne, Mode: proto.ModeOwner, Target: target},
			{Rail: proto.RailOne, Mode: proto.ModeAny, Target: target},
			{Rail: proto.RailInst, InstanceID: h.iid, Mode: proto.ModeOwner, Target: target},
			{Rail: proto.RailInst, InstanceID: h.iid, Mode: proto.ModeAny, Target: target},
			{Rail: proto.RailAll, Mode: proto.ModeAny, Target: target},
		} {
			rq.Space, rq.Endpoint, rq.Command, rq.Caller, rq.Nonce = space, wire.ManagerEndpoint, cmd, ag.caller, proto.NewNonce()
			subj, err := rq.Subject()
			if err != nil {
				t.Fatal(err)
			}
			if err := ag.nc.Publish(subj, []byte(`{"v":1,"id":"x","args":{"name":"`+acc.Name+`","text":"echo RAW-PWNED"}}`)); err != nil {
				t.Fatal(err)
			}
			_ = ag.nc.Flush()
			waitFor(t, 5*time.Second, func() error { return ag.refused(subj) })
		}
	}
	// A PubAck reflected onto the manager's rail (the agent's own post,
	// with the reply subject naming input in any mode as the operator) is
	// no request: never served, never answered.
	reflect, _ := proto.Request{Space: space, Rail: proto.RailOne, Endpoint: wire.ManagerEndpoint, Command: "input", Mode: proto.ModeAny, Target: target, Caller: h.caller, Nonce: proto.NewNonce()}.Subject()
	post := `{"id":"p1","ts":1,"space":"` + space + `","from":{"id":"local.spawner","name":"spawner"},"channel":"team","parts":[{"kind":"text","text":"x"}]}`
	if err := ag.nc.PublishMsg(&nats.Msg{Subject: "cotal." + space + ".chat.local.spawner.team", Reply: reflect, Data: []byte(post)}); err != nil {
		t.Fatal(err)
	}
	_ = ag.nc.Flush()

	// Through the client the agent hears why, in words.
	_, err = mgr(agent).Input(ctxT(t), client.Seat{Name: acc.Name, Manager: h.iid, Owner: acc.Owner, UID: acc.UID}, "echo CLIENT-PWNED", true)
	if e := errCode(t, err); e.Code != proto.CodePermissionDenied || !strings.Contains(e.Message, client.OnlyOperatorTypes) {
		t.Fatalf("the agent's input through the client: %v", e)
	}

	// The handler does not rely on the broker: the same requests on a
	// connection the broker lets publish anything, as the agent, are
	// refused before they run.
	deputy := h.client(h.op, ag.caller)
	for _, opt := range []ep.CallOption{owned(acc), anyMode(acc)} {
		_, err := deputy.Call(ctxT(t), wire.ManagerEndpoint, "input", client.InputArgs{Name: acc.Name, Text: "echo DEPUTY-PWNED"}, ep.On(h.iid), opt)
		e := errCode(t, err)
		if e.Code != proto.CodePermissionDenied || e.EffectiveOutcome() != proto.NotExecuted || !strings.Contains(e.Message, client.OnlyOperatorTypes) {
			t.Fatalf("input as the agent past the broker: %v (%s)", e, e.EffectiveOutcome())
		}
	}
	// The operator in owner mode reaches only the seats it spawned; in any
	// mode, every seat.
	_, err = h.c.Call(ctxT(t), wire.ManagerEndpoint, "input", client.InputArgs{Name: acc.Name, Text: "echo OWNER-PWNED"}, ep.On(h.iid), owned(acc))
	if e := errCode(t, err); e.Code != proto.CodePermissionDenied || !strings.Contains(e.Message, "did not spawn") {
		t.Fatalf("the operator's owner-mode input on an agent's seat: %v", e)
	}
	if _, err := h.c.Call(ctxT(t), wire.ManagerEndpoint, "input", client.InputArgs{Name: acc.Name, Text: "echo operator-mark''er"}, ep.On(h.iid), anyMode(acc)); err != nil {
		t.Fatalf("the operator's any-mode input: %v", err)
	}
	text := waitScreen(t, h.c, h.iid, acc.Name, "operator-marker", 5*time.Second)
	if strings.Contains(text, "PWNED") {
		t.Fatalf("a refused input reached the seat:\n%s", text)
	}
}
