package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/client"
)

// follow awaits sp and records what the watch was told.
func follow(t *testing.T, c *client.Client, sp client.Spawned) (ep.GoalResult, []client.Step, int) {
	t.Helper()
	var steps []client.Step
	pending := 0
	res, err := c.AwaitSpawn(ctxT(t), sp, client.Watch{
		Step:    func(s client.Step) { steps = append(steps, s) },
		Pending: func() { pending++ },
	})
	if err != nil {
		t.Fatalf("awaiting %s: %v", sp.Name, err)
	}
	return res, steps, pending
}

// TestSpawnIsFollowedToItsOutcome: a spawn is accepted by the manager it
// was pinned to, and followed through its steps (launched with the pid,
// then ready) to succeeded; one that exits at once ends failed, saying
// how.
func TestSpawnIsFollowedToItsOutcome(t *testing.T) {
	h := startMesh(t, host.Config{})
	h.persona("shell", "sh")
	h.persona("quick", "sh", "-c", "echo leaving now; exit 7")

	sp, err := h.c.Spawn(ctxT(t), client.SpawnArgs{Persona: "shell"}, h.iid)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Name != "shell" || sp.Manager != h.iid || sp.GoalID == "" || sp.Deadline() != 5*time.Second || !strings.Contains(string(sp.Reply), sp.GoalID) {
		t.Fatalf("accepted %+v (reply %s)", sp, sp.Reply)
	}
	res, steps, pending := follow(t, h.c, sp)
	if res.State != ep.GoalSucceeded {
		t.Fatalf("outcome %s %+v", res.State, res.Error)
	}
	if pending > 1 {
		t.Errorf("told %d times that the outcome was pending, want at most once", pending)
	}
	if len(steps) == 0 || steps[0].Step != "launched" || steps[0].PID <= 0 {
		t.Fatalf("steps %+v, want launched with a pid first", steps)
	}
	// The ready step comes before the outcome is written; it is told
	// unless it is still on the wire when the outcome is read.
	if last := steps[len(steps)-1]; len(steps) > 2 || (len(steps) == 2 && last.Step != "ready") {
		t.Fatalf("steps %+v, want launched then ready", steps)
	}
	r, err := h.c.Locate(ctxT(t), "shell", "")
	if err != nil || r.PID != steps[0].PID || r.GoalID != sp.GoalID {
		t.Fatalf("the seat %+v (%v) is not the one launched (pid %d)", r, err, steps[0].PID)
	}

	quick, err := h.c.Spawn(ctxT(t), client.SpawnArgs{Persona: "quick"}, "")
	if err != nil {
		t.Fatal(err)
	}
	res, steps, _ = follow(t, h.c, quick)
	if res.State != ep.GoalFailed || res.Error == nil || !strings.Contains(res.Error.Message, "exit status 7") || !strings.Contains(res.Error.Message, "leaving now") {
		t.Fatalf("quick: %s %+v, want failed with its exit status and last lines", res.State, res.Error)
	}
	for _, s := range steps {
		if s.Step == "ready" {
			t.Fatalf("quick was told ready: %+v", steps)
		}
	}
}

// TestAwaitSpawnEndsWithItsContext: a seat that never shows it is up has
// no outcome before its readiness bound; a follow that gives up earlier
// says so with the context's error.
func TestAwaitSpawnEndsWithItsContext(t *testing.T) {
	h := startMesh(t, host.Config{Readiness: 10 * time.Second})
	h.persona("mute", "sleep", "30")
	sp, err := h.c.Spawn(ctxT(t), client.SpawnArgs{Persona: "mute"}, h.iid)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	pending := 0
	_, err = h.c.AwaitSpawn(ctx, sp, client.Watch{Pending: func() { pending++ }})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "mute") {
		t.Fatalf("await past its context: %v, want the deadline, naming the seat", err)
	}
	if pending != 1 {
		t.Fatalf("told %d times that the outcome was pending, want once", pending)
	}
}

// TestSpawnRefusalIsTheManagersWord: a spawn the manager refuses comes
// back as its ep error, not run.
func TestSpawnRefusalIsTheManagersWord(t *testing.T) {
	h := startMesh(t, host.Config{})
	_, err := h.c.Spawn(ctxT(t), client.SpawnArgs{Persona: "nobody"}, "")
	if e := errCode(t, err); e.Code != proto.CodeNotFound || !strings.Contains(e.Message, "nobody") {
		t.Fatalf("spawn of an unknown persona: %v", e)
	}
}
