package seat_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// agentClient mints an agent identity with caps, connects it over TCP
// and returns its ep client.
func (h *harness) agentClient(name string, caps ...string) *ep.Client {
	h.t.Helper()
	cr, err := h.m.Broker().Authority().Mint(broker.Identity{
		Space: space, Principal: wire.Principal{Owner: "local", Actor: name}, AllowPublish: []string{}, Capabilities: caps,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := broker.ProvisionIdentity(ctxT(h.t), h.op, cr.Identity); err != nil {
		h.t.Fatal(err)
	}
	nc, err := nats.Connect(h.m.Broker().URL(), nats.UserJWTAndSeed(cr.JWT, string(cr.Seed)), nats.CustomInboxPrefix(cr.Identity.InboxPrefix()),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})) // refusals are asserted, not logged
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(nc.Close)
	id := cr.Identity
	return h.client(nc, proto.Caller{Owner: id.Principal.Owner, Actor: id.Principal.Actor, UID: id.UID})
}

func TestInputRefusedToSpawnOnlyCredential(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	spawner := h.agentClient("spawner", broker.CapSpawn)

	acc := mustSpawn(t, spawner, h.iid, client.SpawnArgs{Persona: "shell"})
	res := goal(t, spawner, h.iid, acc.GoalID, 10*time.Second)
	if res.State != ep.GoalSucceeded {
		t.Fatalf("spawn by the agent: %s %+v", res.State, res.Error)
	}

	const refused = "echo refused-mark''er"
	_, err := spawner.Call(ctxT(t), wire.ManagerEndpoint, "input", map[string]any{"name": acc.Name, "text": refused}, ep.On(h.iid), ep.Timeout(5*time.Second))
	e := errCode(t, err)
	if e.Code != proto.CodePermissionDenied || e.EffectiveOutcome() != proto.NotExecuted {
		t.Fatalf("input by a spawn-only credential: %v (%s), want permission-denied not-executed", e, e.EffectiveOutcome())
	}
	// Nor may it read the seat's screen or stop it.
	for _, cmd := range []string{"screen", "despawn"} {
		_, err := spawner.Call(ctxT(t), wire.ManagerEndpoint, cmd, map[string]any{"name": acc.Name}, ep.On(h.iid), ep.Timeout(5*time.Second))
		if e := proto.AsError(err); e == nil || e.EffectiveOutcome() != proto.NotExecuted {
			t.Fatalf("%s by a spawn-only credential: %v, want a not-executed refusal", cmd, err)
		}
	}

	// The operator's input lands after anything sent before it: once its
	// marker is on the screen, a leaked write would be there too.
	input(t, h.c, h.iid, acc.Name, "echo operator-mark''er")
	text := waitScreen(t, h.c, h.iid, acc.Name, "operator-marker", 5*time.Second)
	if strings.Contains(text, "refused-mark") {
		t.Fatalf("the refused input reached the seat:\n%s", text)
	}
	if r, _ := row(ps(t, h.c, h.iid), acc.Name); r.Process != "running" {
		t.Fatalf("seat after the refusals: %+v", r)
	}
}
