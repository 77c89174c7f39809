package client_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/client"
)

// TestOperatorTypesReadsAndStops: input reaches the seat's terminal and
// counts what it accepted, the screen shows the answer, inspect is the
// census row, and stop returns the row once the seat is offline.
func TestOperatorTypesReadsAndStops(t *testing.T) {
	h := startMesh(t, host.Config{})
	h.persona("shell", "sh")
	h.up(h.c, "shell", "", h.iid)
	r, err := h.c.Locate(ctxT(t), "shell", "")
	if err != nil {
		t.Fatal(err)
	}
	s := r.Seat()
	if s != (client.Seat{Name: "shell", Manager: h.iid}) {
		t.Fatalf("census seat %+v", s)
	}

	in, err := h.c.Input(ctxT(t), s, "echo client-$((6*7))", true)
	if err != nil || in.Name != "shell" || in.Bytes != len("echo client-$((6*7))")+1 {
		t.Fatalf("input: %+v %v", in, err)
	}
	waitFor(t, 5*time.Second, func() error {
		scr, err := h.c.Screen(ctxT(t), s)
		if err != nil {
			return err
		}
		if !scr.Running || !strings.Contains(scr.Screen, "client-42") {
			return fmt.Errorf("screen (running %v):\n%s", scr.Running, scr.Screen)
		}
		return nil
	})
	row, err := h.c.Inspect(ctxT(t), s)
	if err != nil || row.LifecycleUID != r.LifecycleUID || !row.Running() {
		t.Fatalf("inspect %+v (%v), want the census row's seat running", row, err)
	}

	stopped, err := h.c.Stop(ctxT(t), s, false)
	if err != nil || stopped.Running() || !strings.HasPrefix(stopped.Process, "killed") || stopped.Mesh != "offline" {
		t.Fatalf("stop --force: %+v %v", stopped, err)
	}
	_, err = h.c.Input(ctxT(t), s, "echo late", true)
	if e := errCode(t, err); e.Code != proto.CodeFailedPrecondition {
		t.Fatalf("input to a stopped seat: %v", e)
	}
}

// TestOwnerModeReachesOnlyTheSpawnersSeats: a spawn-capable agent reads,
// inspects and stops the seat it spawned, addressed as Spawned.Owned; the
// same calls on another agent's seat are refused, and that seat runs on.
func TestOwnerModeReachesOnlyTheSpawnersSeats(t *testing.T) {
	h := startMesh(t, host.Config{})
	h.persona("shell", "sh")
	alice := h.agent("alice", broker.CapSpawn)
	bob := h.agent("bob", broker.CapSpawn)
	mine := h.up(alice, "shell", "mine", h.iid)
	theirs := h.up(bob, "shell", "theirs", h.iid)

	if r, err := alice.Inspect(ctxT(t), mine.Owned()); err != nil || r.LifecycleUID != mine.UID {
		t.Fatalf("the spawner inspecting its seat: %+v %v", r, err)
	}
	if _, err := alice.Screen(ctxT(t), mine.Owned()); err != nil {
		t.Fatalf("the spawner reading its seat's screen: %v", err)
	}
	// Without owner mode an agent is not the operator.
	if _, err := alice.Screen(ctxT(t), client.Seat{Name: mine.Name, Manager: h.iid}); errCode(t, err).Code != proto.CodePermissionDenied {
		t.Fatalf("an agent's screen call without owner mode: %v", err)
	}
	if _, err := alice.Census(ctxT(t), h.iid); err == nil {
		t.Fatal("an agent took the census")
	}
	theirsAsAlice := client.Seat{Name: theirs.Name, Manager: h.iid, Owner: theirs.Owner, UID: theirs.UID}
	if _, err := alice.Stop(ctxT(t), theirsAsAlice, false); errCode(t, err).Code != proto.CodePermissionDenied {
		t.Fatalf("stopping another agent's seat: %v", err)
	}
	if r, err := bob.Inspect(ctxT(t), theirs.Owned()); err != nil || !r.Running() {
		t.Fatalf("the other agent's seat after the refusal: %+v %v", r, err)
	}
	if r, err := alice.Stop(ctxT(t), mine.Owned(), false); err != nil || r.Running() {
		t.Fatalf("the spawner stopping its seat: %+v %v", r, err)
	}
	if _, err := alice.Input(ctxT(t), mine.Owned(), "echo hi", true); err == nil {
		t.Fatal("input in owner mode ran; only the operator may type")
	}
}
