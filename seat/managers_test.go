package seat_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
)

// extraManager starts another manager instance of the mesh in this
// process, the way `cotal supervise` does, on its own operator connection.
func (h *harness) extraManager(name string) (*seat.Manager, *nats.Conn) {
	h.t.Helper()
	nc, err := h.m.Broker().Connect("manager-" + name)
	if err != nil {
		h.t.Fatal(err)
	}
	mgr, err := seat.New(seat.Options{
		Space: space, URL: h.m.Broker().URL(), Conn: nc,
		Identity:     ep.Identity{Principal: wire.Principal{Owner: "local", Actor: "cotal_manager"}, UID: wire.NewLifecycleUID()},
		InstanceFile: filepath.Join(h.t.TempDir(), name+".id"), ProjectDir: h.project,
		Minter: issue.NewSeatMinter(h.paths, nc, false), Readiness: 5 * time.Second,
	})
	if err != nil {
		nc.Close()
		h.t.Fatal(err)
	}
	if err := mgr.Start(ctxT(h.t)); err != nil {
		nc.Close()
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		_ = mgr.Close()
		nc.Close()
	})
	h.t.Cleanup(func() { h.killSeats(mgr.InstanceID()) })
	return mgr, nc
}

// census scatters ps over every registered manager.
func census(t testing.TB, c *ep.Client) (*ep.ScatterResult, map[string]client.PsReply) {
	t.Helper()
	res, err := c.Scatter(ctxT(t), wire.ManagerEndpoint, "ps", nil, ep.Timeout(3*time.Second), ep.ProbeAfter(300*time.Millisecond))
	if err != nil && res == nil {
		t.Fatalf("scatter ps: %v", err)
	}
	out := map[string]client.PsReply{}
	for _, r := range res.Replies {
		if r.Error != nil {
			t.Fatalf("ps on %s: %v", r.InstanceID, r.Error)
		}
		var p client.PsReply
		if err := json.Unmarshal(r.Data, &p); err != nil {
			t.Fatalf("ps on %s: %s: %v", r.InstanceID, r.Data, err)
		}
		if p.Instance != r.InstanceID {
			t.Fatalf("ps reply on %s's subject says it is %s", r.InstanceID, p.Instance)
		}
		out[r.InstanceID] = p
	}
	return res, out
}

func TestTwoManagersPsAttributes(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	b, bnc := h.extraManager("b")
	c, _ := h.extraManager("c")
	if b.InstanceID() == h.iid || c.InstanceID() == h.iid || b.InstanceID() == c.InstanceID() {
		t.Fatalf("instance ids not distinct: %s %s %s", h.iid, b.InstanceID(), c.InstanceID())
	}

	onA := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell", Name: "left"})
	onB := mustSpawn(t, h.c, b.InstanceID(), client.SpawnArgs{Persona: "shell", Name: "right"})
	for _, x := range []struct {
		iid string
		acc client.SpawnAccepted
	}{{h.iid, onA}, {b.InstanceID(), onB}} {
		// Goal facts are not per instance: either manager can answer.
		if res := goal(t, h.c, x.iid, x.acc.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
			t.Fatalf("%s: %s %+v", x.acc.Name, res.State, res.Error)
		}
	}

	res, replies := census(t, h.c)
	if !res.Complete || len(res.Missing) != 0 || len(replies) != 3 {
		t.Fatalf("census of three live managers: complete=%v missing=%+v replies=%d", res.Complete, res.Missing, len(replies))
	}
	want := map[string][]string{h.iid: {"left"}, b.InstanceID(): {"right"}, c.InstanceID(): {}}
	for iid, seats := range want {
		got := names(replies[iid])
		if len(got) != len(seats) || (len(seats) == 1 && got[0] != seats[0]) {
			t.Errorf("manager %s lists %v, want %v", iid, got, seats)
		}
	}

	// A clean close deregisters: the census no longer expects c.
	if err := c.Close(); err != nil {
		t.Fatalf("closing manager c: %v", err)
	}
	res, replies = census(t, h.c)
	if !res.Complete || len(replies) != 2 {
		t.Fatalf("census after c closed cleanly: complete=%v missing=%+v replies=%d", res.Complete, res.Missing, len(replies))
	}
	for _, s := range res.Expected {
		if s.InstanceID == c.InstanceID() {
			t.Fatalf("a cleanly closed manager is still expected: %+v", res.Expected)
		}
	}

	// A crashed manager (its connection gone, its registration left) is
	// missing, probed gone, and the census is incomplete.
	bnc.Close()
	res, replies = census(t, h.c)
	if res.Complete {
		t.Fatalf("census with a crashed manager is complete: %+v", res)
	}
	if len(res.Missing) != 1 || res.Missing[0].InstanceID != b.InstanceID() || res.Missing[0].Liveness != ep.Gone {
		t.Fatalf("missing %+v, want %s probed gone", res.Missing, b.InstanceID())
	}
	if got := names(replies[h.iid]); len(replies) != 1 || len(got) != 1 || got[0] != "left" {
		t.Fatalf("the live manager's census: %v", replies)
	}
	// Its seat still runs in this process; Close stops it.
	if b.Live()[0] != "right" {
		t.Fatalf("crashed manager's live seats %v", b.Live())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b.StopAll(ctx)
	if live := b.Live(); len(live) != 0 {
		t.Fatalf("seats of b after StopAll: %v", live)
	}
}
