package seat_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
)

// presenceOf reads the presence record of id straight from the KV bucket.
func (h *harness) presenceOf(id string) (presence.Record, error) {
	js, err := jetstream.New(h.op)
	if err != nil {
		return presence.Record{}, err
	}
	kv, err := js.KeyValue(ctxT(h.t), wire.PresenceBucket(space))
	if err != nil {
		return presence.Record{}, err
	}
	e, err := kv.Get(ctxT(h.t), id)
	if err != nil {
		return presence.Record{}, fmt.Errorf("presence key %s: %w", id, err)
	}
	var rec presence.Record
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return presence.Record{}, fmt.Errorf("presence key %s: %w", id, err)
	}
	return rec, nil
}

func TestSpawnShellTypeScreenStop(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)

	before := time.Now()
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell"})
	if acc.Name != "shell" || acc.Owner != "local" || acc.Actor != "shell" || acc.GoalID == "" || acc.UID == "" {
		t.Fatalf("acceptance %+v", acc)
	}
	if acc.ReadinessDeadlineMs != 5000 {
		t.Errorf("readinessDeadlineMs %d, want the manager's 5000", acc.ReadinessDeadlineMs)
	}
	res := goal(t, h.c, h.iid, acc.GoalID, 10*time.Second)
	if res.State != ep.GoalSucceeded {
		t.Fatalf("goal %s: %+v", res.State, res.Error)
	}
	var ok client.SpawnSucceeded
	if err := json.Unmarshal(res.Data, &ok); err != nil || ok.Name != "shell" || ok.ID != "local.shell" || ok.PID == 0 || ok.LifecycleUID != acc.UID {
		t.Fatalf("succeeded data %s (%v)", res.Data, err)
	}
	// Another caller has no goal of that id: goal-result is scoped to the spawner.
	other := h.client(h.op, proto.Caller{Owner: "local", Actor: "someone_else", UID: wire.NewLifecycleUID()})
	if _, found, err := other.GoalResult(ctxT(t), wire.ManagerEndpoint, acc.GoalID, ep.On(h.iid)); err != nil || found {
		t.Fatalf("another caller read the spawner's goal: found=%v err=%v", found, err)
	}

	in := input(t, h.c, h.iid, "shell", "echo hello-$((6*7))")
	if want := len("echo hello-$((6*7))") + 1; in.Bytes != want || in.Name != "shell" {
		t.Errorf("input reply %+v, want %d bytes", in, want)
	}
	waitScreen(t, h.c, h.iid, "shell", "hello-42", 5*time.Second)

	r, found := row(ps(t, h.c, h.iid), "shell")
	if !found {
		t.Fatal("ps does not list shell")
	}
	now := time.Now()
	if r.Process != "running" || r.PID != ok.PID || r.State != seat.StateReady || r.ID != "local.shell" || r.LifecycleUID != acc.UID || r.GoalID != acc.GoalID {
		t.Fatalf("ps row %+v", r)
	}
	if r.StartedMs < before.UnixMilli() || r.StartedMs > now.UnixMilli() {
		t.Errorf("startedMs %d is not between the spawn (%d) and now (%d)", r.StartedMs, before.UnixMilli(), now.UnixMilli())
	}
	if r.Mesh != string(presence.Idle) || r.LastOutputMs == 0 {
		t.Errorf("ps row mesh %q lastOutputMs %d, want idle and an output time", r.Mesh, r.LastOutputMs)
	}
	if rec, err := h.presenceOf("local.shell"); err != nil || rec.Status == presence.Offline || rec.LifecycleUID != acc.UID {
		t.Fatalf("presence before despawn: %+v %v", rec, err)
	}

	var stopped client.Row
	mustCall(t, h.c, h.iid, "despawn", map[string]any{"name": "shell"}, &stopped)
	// Read once, right after despawn returned: offline now, not after a TTL.
	rec, err := h.presenceOf("local.shell")
	if err != nil || rec.Status != presence.Offline {
		t.Fatalf("presence right after despawn: %+v %v, want offline", rec, err)
	}
	if stopped.Process == "running" || stopped.Mesh != string(presence.Offline) || stopped.State != seat.StateExited || stopped.ExitedMs == 0 || !stopped.Stopped {
		t.Fatalf("despawn row %+v", stopped)
	}
	r, _ = row(ps(t, h.c, h.iid), "shell")
	if r.Process == "running" {
		t.Fatalf("ps after despawn: %+v", r)
	}
	if _, err := mgr(h.c).Input(ctxT(t), client.Seat{Name: "shell", Manager: h.iid}, "echo late", true); errCode(t, err).Code != proto.CodeFailedPrecondition {
		t.Fatalf("input to an exited seat: %v, want failed-precondition", err)
	}
}

func TestExitAtOnceFailsWithExitCode(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("quitter", "sh", []string{"-c", "echo bye; exit 7"}, nil)
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "quitter"})
	res := goal(t, h.c, h.iid, acc.GoalID, 10*time.Second)
	if res.State != ep.GoalFailed || res.Error == nil {
		t.Fatalf("goal %s %+v, want failed", res.State, res.Error)
	}
	if !strings.Contains(res.Error.Message, "exit status 7") || !strings.Contains(res.Error.Message, "bye") {
		t.Fatalf("failure message %q names neither the exit status nor the last line", res.Error.Message)
	}
	r, _ := row(ps(t, h.c, h.iid), "quitter")
	if r.Process != "exited 7" || r.Mesh != string(presence.Offline) || r.Stopped {
		t.Fatalf("ps row %+v", r)
	}
	if _, err := h.presenceOf("local.quitter"); err == nil {
		t.Error("a seat that never came up wrote presence")
	}
}

// busyQuitterEnv makes this test binary a seat's program that prints a
// line, then computes without a pause for 200 ms and exits 7: on a loaded
// machine, a program that exits at once is this between its write and
// its exit.
const busyQuitterEnv = "COTAL_SEAT_TEST_BUSY_QUITTER"

func busyQuitter() {
	fmt.Println("bye")
	start := time.Now()
	for time.Since(start) < 200*time.Millisecond {
	}
	os.Exit(7)
}

// A program whose output pauses while it still computes has not drawn:
// the spawn waits, sees the exit and fails, instead of saying ready for a
// program that is about to be gone.
func TestQuietButComputingIsNotReady(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h.persona("cruncher", exe, nil, map[string]string{busyQuitterEnv: "1"})
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "cruncher"})
	res := goal(t, h.c, h.iid, acc.GoalID, 10*time.Second)
	if res.State != ep.GoalFailed || res.Error == nil || !strings.Contains(res.Error.Message, "exit status 7") {
		t.Fatalf("goal %s %+v, want failed with exit status 7", res.State, res.Error)
	}
}

func TestNeverDrawsIsUncertain(t *testing.T) {
	h := startMesh(t, 1500*time.Millisecond)
	h.persona("sleeper", "sleep", []string{"30"}, nil)
	// Draws only after the bound: it comes up, but its goal stays uncertain.
	h.persona("latecomer", "sh", []string{"-c", "sleep 2; echo late; exec sleep 30"}, nil)
	sleeper := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "sleeper"})
	late := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "latecomer"})

	for _, acc := range []client.SpawnAccepted{sleeper, late} {
		res := goal(t, h.c, h.iid, acc.GoalID, 5*time.Second)
		if res.State != ep.GoalUncertain {
			t.Fatalf("%s: goal %s %+v, want uncertain", acc.Name, res.State, res.Error)
		}
	}
	r, _ := row(ps(t, h.c, h.iid), "sleeper")
	if r.Process != "running" || r.PID == 0 || r.State == seat.StateReady || r.State == seat.StateExited {
		t.Fatalf("sleeper after uncertain: %+v, want kept running", r)
	}
	// The latecomer draws, settles and joins the mesh; its goal is not rewritten.
	waitFor(t, 5*time.Second, func() error {
		r, _ := row(ps(t, h.c, h.iid), "latecomer")
		if r.State != seat.StateReady || r.Mesh == string(presence.Offline) {
			return fmt.Errorf("latecomer %s, mesh %s", r.State, r.Mesh)
		}
		return nil
	})
	for _, acc := range []client.SpawnAccepted{sleeper, late} {
		if res := goal(t, h.c, h.iid, acc.GoalID, time.Second); res.State != ep.GoalUncertain {
			t.Fatalf("%s: goal flipped to %s", acc.Name, res.State)
		}
	}
	r, _ = row(ps(t, h.c, h.iid), "sleeper")
	if r.Process != "running" {
		t.Fatalf("sleeper: %+v", r)
	}
}

func TestNameNumberingAndPinnedRefusal(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)

	// The second spawn is asked for as soon as the first is accepted, while
	// the first seat is still being launched: it must not get its name.
	first := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell"})
	second := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell"})
	if first.Name != "shell" || second.Name != "shell_2" {
		t.Fatalf("back-to-back unpinned spawns named %s and %s, want shell and shell_2", first.Name, second.Name)
	}
	// Nor may a pinned spawn take it in that window.
	if _, err := spawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell", Name: "shell_2"}); err == nil || errCode(t, err).Code != proto.CodeAlreadyExists {
		t.Fatalf("pinned spawn onto a seat being launched: %v, want already-exists", err)
	}
	// Spawns at once each get a name of their own.
	const burst = 4
	var wg sync.WaitGroup
	accs := make([]client.SpawnAccepted, burst)
	errs := make([]error, burst)
	for i := range accs {
		wg.Go(func() { accs[i], errs[i] = spawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell"}) })
	}
	wg.Wait()
	got := map[string]bool{}
	for i, acc := range accs {
		if errs[i] != nil {
			t.Fatalf("spawn %d of the burst: %v", i, errs[i])
		}
		got[acc.Name] = true
	}
	for i := 3; i < 3+burst; i++ {
		if !got[fmt.Sprintf("shell_%d", i)] {
			t.Fatalf("%d spawns at once were named %v, want shell_3 to shell_%d once each", burst, got, 2+burst)
		}
	}
	for _, acc := range append(accs, first, second) {
		if res := goal(t, h.c, h.iid, acc.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
			t.Fatalf("%s: %s %+v", acc.Name, res.State, res.Error)
		}
	}
	if live := h.m.Manager().Live(); len(live) != 2+burst {
		t.Fatalf("live seats %v, want %d", live, 2+burst)
	}

	minted, seatCreds := countFiles(issue.MintedDir(h.paths)), countFiles(h.paths.AuthDir())+countFiles(issue.RunDir(h.paths))
	before := seatNames(ps(t, h.c, h.iid))
	_, err := spawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell", Name: "shell"})
	e := errCode(t, err)
	if e.Code != proto.CodeAlreadyExists || e.EffectiveOutcome() != proto.NotExecuted {
		t.Fatalf("pinned spawn onto a live name: %v (%s), want already-exists not-executed", e, e.EffectiveOutcome())
	}
	if after := seatNames(ps(t, h.c, h.iid)); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Fatalf("ps after the refusal %v, before %v", after, before)
	}
	if n, m := countFiles(issue.MintedDir(h.paths)), countFiles(h.paths.AuthDir())+countFiles(issue.RunDir(h.paths)); n != minted || m != seatCreds {
		t.Fatalf("the refused spawn minted: minted records %d→%d, auth and launch files %d→%d", minted, n, seatCreds, m)
	}

	// Once shell is gone, its name is free for a pinned spawn again.
	mustCall(t, h.c, h.iid, "despawn", map[string]any{"name": "shell", "graceful": false}, nil)
	again := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell", Name: "shell"})
	if again.Name != "shell" || again.UID == first.UID {
		t.Fatalf("pinned respawn %+v", again)
	}
	if res := goal(t, h.c, h.iid, again.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
		t.Fatalf("pinned respawn: %s %+v", res.State, res.Error)
	}
}

// TestReadinessIsTheSpawnsThenThePersonasThenTheManagers: a seat that
// draws after 2 s is uncertain under the manager's 1.5 s bound, and
// ready when its spawn or its persona gives it longer; the acceptance
// says the bound in force.
func TestReadinessIsTheSpawnsThenThePersonasThenTheManagers(t *testing.T) {
	h := startMesh(t, 1500*time.Millisecond)
	late := []string{"-c", "sleep 2; echo late; exec sleep 30"}
	h.persona("hurried", "sh", late, nil)
	h.personaText("patient", "---\nname: patient\nagent: command\ncommand: sh\nargs: [\"-c\", \"sleep 2; echo late; exec sleep 30\"]\nreadiness: 20s\n---\n")
	cases := []struct {
		args  client.SpawnArgs
		bound int64
		want  string
	}{
		{client.SpawnArgs{Persona: "hurried"}, 1500, ep.GoalUncertain},
		{client.SpawnArgs{Persona: "hurried", Name: "asked", ReadinessMs: 20000}, 20000, ep.GoalSucceeded},
		{client.SpawnArgs{Persona: "patient"}, 20000, ep.GoalSucceeded},
		{client.SpawnArgs{Persona: "patient", Name: "overruled", ReadinessMs: 1200}, 1200, ep.GoalUncertain},
	}
	acc := make([]client.SpawnAccepted, len(cases))
	for i, c := range cases {
		acc[i] = mustSpawn(t, h.c, h.iid, c.args)
		if acc[i].ReadinessDeadlineMs != c.bound {
			t.Errorf("%s: readinessDeadlineMs %d, want %d", acc[i].Name, acc[i].ReadinessDeadlineMs, c.bound)
		}
	}
	for i, c := range cases {
		if res := goal(t, h.c, h.iid, acc[i].GoalID, 30*time.Second); res.State != c.want {
			t.Errorf("%s: goal %s %+v, want %s", acc[i].Name, res.State, res.Error, c.want)
		}
	}
	// Past an hour is refused by the spawn's contract, nothing started.
	if _, err := mgr(h.c).Spawn(ctxT(t), client.SpawnArgs{Persona: "hurried", Name: "forever", ReadinessMs: 3600001}, h.iid); errCode(t, err).Code != proto.CodeBadRequest {
		t.Fatalf("a spawn asking 1h0m0.001s: %v, want bad-request", err)
	}
	if _, found := row(ps(t, h.c, h.iid), "forever"); found {
		t.Fatal("a refused spawn left a seat")
	}
}

// TestReadinessDefaultsPerHarness: with no bound said anywhere, opencode
// (which loads its provider catalogue at start) gets its own longer bound.
func TestReadinessDefaultsPerHarness(t *testing.T) {
	persona := func(harness string, own time.Duration) *seat.Persona {
		return &seat.Persona{AgentFile: &config.AgentFile{Launch: config.Launch{Readiness: own}}, Harness: harness}
	}
	for _, c := range []struct {
		harness       string
		asked, own, m time.Duration
		want          time.Duration
	}{
		{"claude", 0, 0, 0, seat.DefaultReadiness},
		{"command", 0, 0, 0, seat.DefaultReadiness},
		{"opencode", 0, 0, 0, seat.OpencodeReadiness},
		{"opencode", 0, 0, 45 * time.Second, 45 * time.Second},
		{"opencode", 0, 5 * time.Minute, 45 * time.Second, 5 * time.Minute},
		{"codex", 10 * time.Second, 5 * time.Minute, 45 * time.Second, 10 * time.Second},
	} {
		if got := seat.ReadinessBound(c.asked, persona(c.harness, c.own), c.m); got != c.want {
			t.Errorf("%s asked %s persona %s manager %s: %s, want %s", c.harness, c.asked, c.own, c.m, got, c.want)
		}
	}
}
