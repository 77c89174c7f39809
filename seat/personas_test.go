package seat_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// TestPersonasOnlyForSpawnersAndNeverTheirSecrets: the personas command
// (what cotal_personas reads) is the spawn capability's: the broker
// carries no agent's request for it without the capability, the handler
// refuses one that gets past the broker, and a spawner's answer names the
// personas without their prompts, environments or commands.
func TestPersonasOnlyForSpawnersAndNeverTheirSecrets(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", []string{"-c", "echo SECRET-ARG"}, map[string]string{"TOKEN": "s3cret-env"})

	plain := h.rawAgent("plain")
	for _, rq := range []proto.Request{{Rail: proto.RailOne}, {Rail: proto.RailInst, InstanceID: h.iid}} {
		rq.Space, rq.Endpoint, rq.Command, rq.Caller, rq.Nonce = space, wire.ManagerEndpoint, wire.ManagerPersonas, plain.caller, proto.NewNonce()
		subj, err := rq.Subject()
		if err != nil {
			t.Fatal(err)
		}
		if err := plain.nc.Publish(subj, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		_ = plain.nc.Flush()
		waitFor(t, 5*time.Second, func() error { return plain.refused(subj) })
	}
	deputy := h.client(h.op, plain.caller)
	_, err := deputy.Call(ctxT(t), wire.ManagerEndpoint, wire.ManagerPersonas, client.PersonasArgs{}, ep.On(h.iid))
	if e := errCode(t, err); e.Code != proto.CodePermissionDenied || e.EffectiveOutcome() != proto.NotExecuted {
		t.Fatalf("personas as a plain agent past the broker: %v", e)
	}

	spawner := h.rawAgent("spawner", broker.CapSpawn)
	r, err := mgr(h.client(spawner.nc, spawner.caller)).Personas(ctxT(t), "", h.iid)
	if err != nil {
		t.Fatalf("personas as a spawner: %v", err)
	}
	if len(r.Personas) != 1 || r.Personas[0].Name != "shell" || r.Personas[0].Harness != "command" {
		t.Fatalf("personas %+v", r.Personas)
	}
	b, _ := json.Marshal(r)
	raw := string(b)
	for _, secret := range []string{"SECRET-ARG", "s3cret-env", `"sh"`} {
		if strings.Contains(raw, secret) {
			t.Fatalf("the personas answer carries %q: %s", secret, raw)
		}
	}
	if _, err := mgr(h.c).Personas(ctxT(t), "../shell", h.iid); errCode(t, err).Code != proto.CodeNotFound {
		t.Fatalf("personas of a path: %v", err)
	}
}
