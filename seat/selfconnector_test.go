package seat_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// Every command the manager serves in self mode is one an agent's
// credential may call: a self command missing from the credential's grants
// is dropped by the broker and its caller waits out its deadline.
func TestEverySelfCommandIsGranted(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	d, err := h.c.Describe(ctxT(t), wire.ManagerEndpoint, h.iid)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range d.Commands {
		if !slices.Contains(c.Modes, proto.ModeSelf) {
			continue
		}
		n++
		if !slices.Contains(wire.ManagerSelfCommands, c.Name) {
			t.Errorf("the manager serves %s in self mode, but wire.ManagerSelfCommands %v does not grant it", c.Name, wire.ManagerSelfCommands)
		}
	}
	for _, want := range []string{wire.ManagerConnector, wire.ManagerInboxWindow, wire.ManagerSetAttention, wire.ManagerChannelMode} {
		if _, ok := d.Command(want); !ok {
			t.Errorf("the manager does not serve %s", want)
		}
	}
	if n == 0 {
		t.Fatal("the manager serves no self command")
	}
}

// The connector's self commands act for the caller's own seat only: an
// agent that is no seat is refused, and one that names a seat's triple as
// its caller is stopped by the broker, so it can neither read the seat's
// inbox nor change its modes.
func TestSelfConnectorCommandsServeOnlyTheSeatItself(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	if err := os.MkdirAll(config.AgentsDir(h.project), 0o700); err != nil {
		t.Fatal(err)
	}
	persona := "---\nname: shell\nagent: command\ncommand: sh\nsubscribe: [team]\n---\n"
	if err := os.WriteFile(filepath.Join(config.AgentsDir(h.project), "shell.md"), []byte(persona), 0o600); err != nil {
		t.Fatal(err)
	}
	acc := h.ready("shell")
	mallory := h.agentClient("mallory")
	for _, cmd := range []string{wire.ManagerConnector, wire.ManagerInboxWindow, wire.ManagerChannelMode} {
		args := map[string]any{}
		if cmd == wire.ManagerChannelMode {
			args = map[string]any{"channel": "team", "mode": "muted"}
		}
		_, err := mallory.Call(ctxT(t), wire.ManagerEndpoint, cmd, args, ep.Self(), ep.On(h.iid), ep.Timeout(5*time.Second))
		if e := errCode(t, err); e.Code != proto.CodeNotFound || e.EffectiveOutcome() != proto.NotExecuted {
			t.Errorf("%s by an agent that is no seat: %v (%s), want not-found, not executed", cmd, e, e.EffectiveOutcome())
		}
	}

	// Another credential calling as the seat: the broker refuses the
	// request subject, which names the seat as the caller.
	cr, err := h.m.Broker().Authority().Mint(broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: "mallory2"}, AllowPublish: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := broker.ProvisionIdentity(ctxT(t), h.op, cr.Identity); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(h.m.Broker().URL(), nats.UserJWTAndSeed(cr.JWT, string(cr.Seed)), nats.CustomInboxPrefix(cr.Identity.InboxPrefix()),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	forged := h.client(nc, proto.Caller{Owner: acc.Owner, Actor: acc.Actor, UID: acc.UID})
	if _, err := forged.Call(ctxT(t), wire.ManagerEndpoint, wire.ManagerChannelMode, client.ChannelModeArgs{Channel: "team", Mode: "muted"},
		ep.Self(), ep.On(h.iid), ep.Timeout(3*time.Second)); err == nil {
		t.Fatal("a call naming the seat as its caller, from another credential, was answered")
	}
	// The seat's presence mirrors its modes: none was set.
	js, err := jetstream.New(h.op)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctxT(t), wire.PresenceBucket(space))
	if err != nil {
		t.Fatal(err)
	}
	ent, err := kv.Get(ctxT(t), wire.Principal{Owner: acc.Owner, Actor: acc.Actor}.ID())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ent.Value()), "channelModes") {
		t.Fatalf("the forged call changed the seat's modes: %s", ent.Value())
	}
}
