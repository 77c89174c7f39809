package seat_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// TestSelfStopReachesOnlyTheCallersOwnSeat: stop is every agent's self
// command (cotal_despawn without a name): the broker carries it only with
// the caller's own triple, a caller that is no seat stops nothing, and a
// seat's stop ends that seat and no other.
func TestSelfStopReachesOnlyTheCallersOwnSeat(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	one, two := h.ready("shell"), h.ready("shell")

	ag := h.rawAgent("plain")
	forged := proto.Request{Space: space, Rail: proto.RailOne, Endpoint: wire.ManagerEndpoint, Command: wire.ManagerStop, Mode: proto.ModeSelf,
		Caller: proto.Caller{Owner: one.Owner, Actor: one.Actor, UID: one.UID}, Nonce: proto.NewNonce()}
	subj, err := forged.Subject()
	if err != nil {
		t.Fatal(err)
	}
	if err := ag.nc.Publish(subj, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	_ = ag.nc.Flush()
	waitFor(t, 5*time.Second, func() error { return ag.refused(subj) })

	_, err = h.client(ag.nc, ag.caller).Call(ctxT(t), wire.ManagerEndpoint, wire.ManagerStop, client.StopArgs{}, ep.Self(), ep.On(h.iid))
	if e := errCode(t, err); e.Code != proto.CodeNotFound {
		t.Fatalf("a self stop by an agent that is no seat: %v", e)
	}
	for _, acc := range []client.SpawnAccepted{one, two} {
		if r, _ := row(ps(t, h.c, h.iid), acc.Name); r.Process != "running" {
			t.Fatalf("%s after the refused stops: %+v", acc.Name, r)
		}
	}

	no := false
	selfCall(t, h, one, wire.ManagerStop, client.StopArgs{Graceful: &no})
	waitFor(t, 10*time.Second, func() error {
		if r, _ := row(ps(t, h.c, h.iid), one.Name); r.Process == "running" {
			return fmt.Errorf("%s still running after stopping itself", one.Name)
		}
		return nil
	})
	if r, _ := row(ps(t, h.c, h.iid), two.Name); r.Process != "running" {
		t.Fatalf("%s after %s stopped itself: %+v", two.Name, one.Name, r)
	}
}
