package mesh_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// The operator's identity is shared by every terminal: a dashboard's
// endpoint with Echoes sees the operator's DMs and tasks sent from another
// connection, once each, marked Echo, and no one else's.
func TestEchoDirectHandsOverTheOperatorsOwnDMsAndTasks(t *testing.T) {
	h := newHarness(t, false)
	h.mint(agent{name: "alice"})
	carol := h.agentEndpoint(agent{name: "carol", allowPub: []string{}}, mesh.Options{OneShot: true})
	op, _ := testmesh.Mint(t, h.b, broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: "root"}, Profile: wire.ProfileOperator})
	plain := h.connect(op, mesh.Options{OneShot: true})
	if err := plain.EchoDirect(ctxT(t)); !errors.Is(err, mesh.ErrEchoesOff) {
		t.Fatalf("EchoDirect without Echoes: %v, want ErrEchoesOff", err)
	}
	dash := h.connect(op, mesh.Options{OneShot: true, Echoes: true})
	if err := dash.EchoDirect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	cli := h.connect(op, mesh.Options{OneShot: true})

	// carol's DM to alice is not the operator's: it must not come.
	if _, err := carol.DM(ctxT(t), "alice", "carol to alice"); err != nil {
		t.Fatal(err)
	}
	dm, err := cli.DM(ctxT(t), "alice", "from another terminal")
	if err != nil {
		t.Fatal(err)
	}
	it := next(t, dash)
	if !it.Echo || it.Kind != wire.KindDM || it.Msg.ID != dm.ID || it.Subject.Recipient.Actor != "alice" || it.Msg.Text() != "from another terminal" {
		t.Fatalf("first item: echo %v kind %s id %s (sent %s) to %s: %q", it.Echo, it.Kind, it.Msg.ID, dm.ID, it.Subject.Recipient, it.Msg.Text())
	}
	if err := it.Ack(); err != nil {
		t.Fatalf("an echo needs no ack, and acking it must not fail: %v", err)
	}
	task, err := cli.Ask(ctxT(t), "reviewer", "look at the parser")
	if err != nil {
		t.Fatal(err)
	}
	it = next(t, dash)
	if !it.Echo || it.Kind != wire.KindAnycast || it.Msg.ID != task.ID || it.Subject.Role != "reviewer" {
		t.Fatalf("second item: echo %v kind %s id %s (sent %s) role %q", it.Echo, it.Kind, it.Msg.ID, task.ID, it.Subject.Role)
	}
	if n := dash.Pending(); n != 0 {
		t.Errorf("%d more items waiting, want none (each send once, carol's never)", n)
	}
}

// An agent cannot read another identity's sends: EchoDirect is refused by
// the broker, and a raw subscription to the operator's sent DMs is a
// permissions violation.
func TestEchoDirectIsRefusedToAnAgent(t *testing.T) {
	h := newHarness(t, false)
	alice := h.agentEndpoint(agent{name: "alice"}, mesh.Options{OneShot: true, Echoes: true})
	if err := alice.EchoDirect(ctxT(t)); err == nil {
		t.Fatal("alice's EchoDirect was accepted")
	}
	raw := rawClient(t, h, agent{name: "mallory"})
	root := wire.Principal{Owner: "local", Actor: "root"}
	for _, subject := range []string{wire.SentDMFilter(space, root), wire.SentTaskFilter(space, root)} {
		if _, err := raw.nc.SubscribeSync(subject); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 5*time.Second, func() error { return raw.violation(subject) })
	}
}
