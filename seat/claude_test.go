package seat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// hookGrace is the tests' bound on a hook saying it wrote its output.
const hookGrace = 2 * time.Second

// claudeMesh is a mesh with a claude seat played by the stand-in, ready.
func claudeMesh(t *testing.T) (*harness, *fakeHarness, client.SpawnAccepted) {
	t.Helper()
	h := startMeshWith(t, host.Config{Paths: config.Paths{Space: space, StoreDir: t.TempDir()}, Readiness: 20 * time.Second, HookGrace: hookGrace})
	f := h.fakeClaudePersona(t, "cc", false)
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "cc"})
	if res := goal(t, h.c, h.iid, acc.GoalID, 25*time.Second); res.State != ep.GoalSucceeded {
		t.Fatalf("spawn of the stand-in: %s %+v\nscreen:\n%s", res.State, res.Error, screen(t, h.c, h.iid, acc.Name).Screen)
	}
	return h, f, acc
}

// agentRow waits until the seat's row satisfies ok.
func agentRow(t *testing.T, h *harness, name string, ok func(client.Row) error) client.Row {
	t.Helper()
	var r client.Row
	waitFor(t, 10*time.Second, func() error {
		r, _ = row(ps(t, h.c, h.iid), name)
		return ok(r)
	})
	return r
}

func agentIs(state string) func(client.Row) error {
	return func(r client.Row) error {
		if r.Agent == nil || r.Agent.State != state {
			return fmt.Errorf("agent state %+v, want %s", r.Agent, state)
		}
		return nil
	}
}

// noteWith waits for a receipt note of id satisfying ok (the latest one
// when the wait starts counts too).
func noteWith(t *testing.T, w *mesh.ReceiptWatch, id string, ok func(mesh.Progress) bool) mesh.Progress {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var found *mesh.Progress
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		ps := w.Wait(ctx, id, wire.RungAcked, 1, func(p mesh.Progress) {
			if found == nil && ok(p) {
				found = &p
			}
		})
		cancel()
		if found != nil {
			return *found
		}
		for _, p := range ps {
			if ok(p) {
				return p
			}
		}
	}
	t.Fatalf("no receipt note of %s came that fits (latest %+v)", id, w.Wait(context.Background(), id, wire.RungStored, 1, nil))
	return mesh.Progress{}
}

// TestClaudeHooksDeliverAndAckOnlyOnceTheModelAnswered: the seat is ready
// by the harness's own start (its session is on ps); a DM to the idle
// seat wakes it with the nudge alone, reaches the model as the prompt
// hook's added context, and is acked only when a later hook proves the
// model answered.
func TestClaudeHooksDeliverAndAckOnlyOnceTheModelAnswered(t *testing.T) {
	h, f, acc := claudeMesh(t)
	r := agentRow(t, h, acc.Name, agentIs(client.AgentIdle))
	if r.Session != fakeSession || !strings.HasPrefix(r.Agent.Source, "hook SessionStart") {
		t.Fatalf("ps after start: session %q, agent %+v", r.Session, r.Agent)
	}
	bob := h.peer(t, "bob", []string{"team"})
	w, err := bob.WatchReceipts()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sent, err := bob.DM(ctxT(t), acc.Name, "please ping")
	if err != nil {
		t.Fatal(err)
	}
	var prompt fakeRes
	waitFor(t, 15*time.Second, func() error {
		lines := f.lines("prompts.log")
		if len(lines) == 0 {
			return fmt.Errorf("no prompt hook ran (typed: %q)", f.lines("typed.log"))
		}
		return json.Unmarshal([]byte(lines[0]), &prompt)
	})
	typed := f.lines("typed.log")
	if len(typed) != 1 || strings.Contains(typed[0], "please ping") || !strings.HasPrefix(typed[0], "[cotal]") {
		t.Fatalf("typed into the seat: %q; want the nudge alone", typed)
	}
	ctx := hookContext(t, prompt.Stdout)
	if !strings.Contains(ctx, "[DM from bob] please ping") {
		t.Fatalf("the prompt hook's context: %q", ctx)
	}
	p := noteWith(t, w, sent.ID, func(p mesh.Progress) bool { return p.Reaches(wire.RungInjected) })
	if p.Reaches(wire.RungAcked) {
		t.Fatalf("acked before the model answered: %+v", p)
	}
	if err := dmSettled(t, h, acc); err == nil {
		t.Fatal("the DM's stored copy is settled before the model answered")
	}
	f.hook(fakeCmd{Event: "PreToolUse", Input: map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls -l"}}})
	noteWith(t, w, sent.ID, func(p mesh.Progress) bool { return p.Reached == wire.RungAcked })
	waitFor(t, 10*time.Second, func() error { return dmSettled(t, h, acc) })
	agentRow(t, h, acc.Name, func(r client.Row) error {
		if r.Agent == nil || r.Agent.State != client.AgentWorking || r.Mesh != "working" || r.Activity != "Bash(ls -l)" {
			return fmt.Errorf("row %+v / %+v, want working on Bash(ls -l)", r.Agent, r)
		}
		return nil
	})
	f.hook(fakeCmd{Event: "Stop", Input: map[string]any{"stop_hook_active": false}})
	r = agentRow(t, h, acc.Name, agentIs(client.AgentIdle))
	if !r.Agent.AtPrompt || r.Mesh != "idle" {
		t.Fatalf("after Stop: %+v mesh %s, want idle at its prompt", r.Agent, r.Mesh)
	}
}

// TestClaudeStopKeepsTheTurnGoingForAWaitingDM: nothing is typed into a
// seat in a turn; a DM arriving then goes out when the turn ends, as the
// Stop hook's context, and a run of such turns ends at the cap, after
// which the seat is at its prompt and the rest goes through the nudge.
func TestClaudeStopKeepsTheTurnGoingForAWaitingDM(t *testing.T) {
	h, f, acc := claudeMesh(t)
	f.hook(fakeCmd{Event: "UserPromptSubmit", Input: map[string]any{"prompt": "work"}})
	agentRow(t, h, acc.Name, agentIs(client.AgentWorking))
	bob := h.peer(t, "bob", []string{"team"})
	w, err := bob.WatchReceipts()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := 1; i <= 7; i++ {
		sent, err := bob.DM(ctxT(t), acc.Name, fmt.Sprintf("mid-turn-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		noteWith(t, w, sent.ID, func(p mesh.Progress) bool {
			return p.Latest == wire.RungTaken && strings.HasPrefix(p.Why, "held: in a turn")
		})
		if typed := f.lines("typed.log"); len(typed) != 0 {
			t.Fatalf("typed into a seat in a turn: %q", typed)
		}
		out := f.hook(fakeCmd{Event: "Stop", Input: map[string]any{"stop_hook_active": i > 1}})
		ctx := hookContext(t, out.Stdout)
		if i <= 6 && !strings.Contains(ctx, fmt.Sprintf("mid-turn-%d", i)) {
			t.Fatalf("Stop %d did not keep the turn going with the DM: %q", i, out.Stdout)
		}
		if i == 7 && out.Stdout != "" {
			t.Fatalf("Stop %d kept the turn going past the cap: %q", i, out.Stdout)
		}
	}
	// At its prompt now: the seventh goes through the nudge.
	waitFor(t, 15*time.Second, func() error {
		for _, l := range f.lines("prompts.log") {
			var r fakeRes
			_ = json.Unmarshal([]byte(l), &r)
			if strings.Contains(hookContext(t, r.Stdout), "mid-turn-7") {
				return nil
			}
		}
		return fmt.Errorf("the last DM has not gone out through the nudge (typed %q)", f.lines("typed.log"))
	})
}

// TestClaudeUnconfirmedHandOverComesBackAsARepeat: output a hook never
// said it wrote goes back after the grace, and what a failed request
// carried goes back too, each marked as a possible repeat.
func TestClaudeUnconfirmedHandOverComesBackAsARepeat(t *testing.T) {
	h, f, acc := claudeMesh(t)
	f.hook(fakeCmd{Event: "UserPromptSubmit", Input: map[string]any{"prompt": "work"}})
	bob := h.peer(t, "bob", []string{"team"})
	w, err := bob.WatchReceipts()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sent, err := bob.DM(ctxT(t), acc.Name, "lost-once")
	if err != nil {
		t.Fatal(err)
	}
	noteWith(t, w, sent.ID, func(p mesh.Progress) bool { return strings.HasPrefix(p.Why, "held: in a turn") })
	// A hook that takes the DM and dies before writing it.
	c := h.client(h.op, proto.Caller{Owner: acc.Owner, Actor: acc.Actor, UID: acc.UID})
	in, _ := json.Marshal(map[string]any{"session_id": fakeSession, "hook_event_name": "Stop"})
	res, err := c.Call(ctxT(t), wire.ManagerEndpoint, wire.ManagerHook, client.HookArgs{Event: "Stop", Input: in}, ep.Self(), ep.On(h.iid))
	if err != nil {
		t.Fatal(err)
	}
	var taken client.HookReply
	if err := json.Unmarshal(res.Data, &taken); err != nil || !strings.Contains(taken.Output, "lost-once") || taken.Token == "" {
		t.Fatalf("the Stop hook's reply %s (%v)", res.Data, err)
	}
	noteWith(t, w, sent.ID, func(p mesh.Progress) bool { return strings.HasPrefix(p.Why, "back in its inbox") })
	out := f.hook(fakeCmd{Event: "Stop", Input: map[string]any{"stop_hook_active": true}})
	if ctx := hookContext(t, out.Stdout); !strings.Contains(ctx, "(possible repeat) [DM from bob] lost-once") {
		t.Fatalf("the DM came back without its repeat mark: %q", out.Stdout)
	}
	noteWith(t, w, sent.ID, func(p mesh.Progress) bool { return p.Latest == wire.RungInjected })
	// Its request failed: what it carried is not proven read either.
	f.hook(fakeCmd{Event: "StopFailure", Input: map[string]any{"error": "rate_limit"}})
	noteWith(t, w, sent.ID, func(p mesh.Progress) bool { return strings.HasPrefix(p.Why, "back in its inbox") })
	// At its prompt after the failure: the nudge, and the prompt hook
	// hands it over again.
	waitFor(t, 15*time.Second, func() error {
		for _, l := range f.lines("prompts.log") {
			var r fakeRes
			_ = json.Unmarshal([]byte(l), &r)
			if strings.Contains(hookContext(t, r.Stdout), "(possible repeat) [DM from bob] lost-once") {
				return nil
			}
		}
		return fmt.Errorf("not handed over again (typed %q)", f.lines("typed.log"))
	})
	f.hook(fakeCmd{Event: "Stop", Input: map[string]any{}})
	noteWith(t, w, sent.ID, func(p mesh.Progress) bool { return p.Reached == wire.RungAcked })
}

// TestClaudePermissionPromptIsAnsweredThroughItsHook: a permission prompt
// makes the seat wait, saying what it asks (ps, presence); a DM meanwhile
// is neither typed nor lost; the person's answer goes back as the hook's
// own decision; a prompt whose hook the harness stops is no longer
// answerable, and nothing asked refuses an answer.
func TestClaudePermissionPromptIsAnsweredThroughItsHook(t *testing.T) {
	h, f, acc := claudeMesh(t)
	f.hook(fakeCmd{Event: "UserPromptSubmit", Input: map[string]any{"prompt": "work"}})
	ask := func(cmd string) chan fakeRes {
		ch := make(chan fakeRes, 1)
		go func() {
			ch <- f.hook(fakeCmd{Event: "PermissionRequest", Input: map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}}})
		}()
		return ch
	}
	got := ask("touch run-bbb2")
	r := agentRow(t, h, acc.Name, agentIs(client.AgentWaiting))
	if r.Agent.Asks != "approve Bash(touch run-bbb2)" || !r.Agent.Answerable || r.Agent.Kind != client.AskApproval {
		t.Fatalf("waiting on %+v", r.Agent)
	}
	agentRow(t, h, acc.Name, func(r client.Row) error {
		if r.Mesh != "waiting" || r.Activity != "approve Bash(touch run-bbb2)" {
			return fmt.Errorf("presence %s %q", r.Mesh, r.Activity)
		}
		return nil
	})
	bob := h.peer(t, "bob", []string{"team"})
	w, err := bob.WatchReceipts()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sent, err := bob.DM(ctxT(t), acc.Name, "1")
	if err != nil {
		t.Fatal(err)
	}
	noteWith(t, w, sent.ID, func(p mesh.Progress) bool { return p.Why == "held: waiting on a person: approve Bash(touch run-bbb2)" })
	if typed := f.lines("typed.log"); len(typed) != 0 {
		t.Fatalf("typed into a seat waiting on a person: %q", typed)
	}
	var ans client.AnswerReply
	mustCall(t, h.c, h.iid, wire.ManagerAnswer, client.AnswerArgs{Name: acc.Name, Decision: client.AnswerAllow}, &ans)
	if ans.Asked != "approve Bash(touch run-bbb2)" {
		t.Fatalf("answer reply %+v", ans)
	}
	res := <-got
	var dec struct {
		HookSpecificOutput struct {
			HookEventName string `json:"hookEventName"`
			Decision      struct{ Behavior, Message string }
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &dec); err != nil || dec.HookSpecificOutput.HookEventName != "PermissionRequest" || dec.HookSpecificOutput.Decision.Behavior != "allow" {
		t.Fatalf("the hook printed %q (%v), want an allow decision", res.Stdout, err)
	}
	agentRow(t, h, acc.Name, agentIs(client.AgentWorking))
	// The DM still waits: the turn's end hands it over.
	f.hook(fakeCmd{Event: "PostToolUse", Input: map[string]any{"tool_name": "Bash"}})
	out := f.hook(fakeCmd{Event: "Stop", Input: map[string]any{"stop_hook_active": false}})
	if !strings.Contains(hookContext(t, out.Stdout), "[DM from bob] 1") {
		t.Fatalf("the DM that came during the prompt: %q", out.Stdout)
	}

	// Denied, with a reason for the model.
	got = ask("rm -rf build")
	agentRow(t, h, acc.Name, agentIs(client.AgentWaiting))
	mustCall(t, h.c, h.iid, wire.ManagerAnswer, client.AnswerArgs{Name: acc.Name, Decision: client.AnswerDeny, Message: "not now"}, &ans)
	res = <-got
	_ = json.Unmarshal([]byte(res.Stdout), &dec)
	if dec.HookSpecificOutput.Decision.Behavior != "deny" || dec.HookSpecificOutput.Decision.Message != "not now" {
		t.Fatalf("deny printed %q", res.Stdout)
	}

	// A prompt answered at the terminal: the harness stops the hook, which
	// prints nothing, and cotal no longer offers to answer it.
	res = f.hook(fakeCmd{Event: "PermissionRequest", Input: map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}}, TermMs: 500})
	if res.Stdout != "" {
		t.Fatalf("a stopped hook printed %q", res.Stdout)
	}
	r = agentRow(t, h, acc.Name, agentIs(client.AgentIdle))
	if r.Agent.Answerable || r.Agent.AtPrompt {
		t.Fatalf("after its hook was stopped: %+v, want not answerable and not proven at its prompt", r.Agent)
	}
	err = call(t, h.c, h.iid, wire.ManagerAnswer, client.AnswerArgs{Name: acc.Name, Decision: client.AnswerAllow}, nil)
	if e := errCode(t, err); e.Code != proto.CodeFailedPrecondition {
		t.Fatalf("answer with nothing asked: %v", e)
	}
}

// TestOnlyTheOperatorAnswersASeat: an agent, even one that may spawn, may
// not answer a seat's prompt, nor report hooks for a seat it is not.
func TestOnlyTheOperatorAnswersASeat(t *testing.T) {
	h, f, acc := claudeMesh(t)
	got := make(chan fakeRes, 1)
	go func() {
		got <- f.hook(fakeCmd{Event: "PermissionRequest", Input: map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "touch owned"}}})
	}()
	agentRow(t, h, acc.Name, agentIs(client.AgentWaiting))
	mallory := h.agentClient("mallory", "spawn")
	_, err := mallory.Call(ctxT(t), wire.ManagerEndpoint, wire.ManagerAnswer, client.AnswerArgs{Name: acc.Name, Decision: client.AnswerAllow}, ep.On(h.iid), ep.Timeout(5*time.Second))
	if e := proto.AsError(err); e == nil || e.EffectiveOutcome() != proto.NotExecuted {
		t.Fatalf("answer by an agent: %v, want a not-executed refusal", err)
	}
	// Its own self calls name it, not the seat: it is no seat here.
	in, _ := json.Marshal(map[string]any{"session_id": fakeSession, "hook_event_name": "PostToolUse"})
	_, err = mallory.Call(ctxT(t), wire.ManagerEndpoint, wire.ManagerHook, client.HookArgs{Event: "PostToolUse", Input: in}, ep.Self(), ep.On(h.iid), ep.Timeout(5*time.Second))
	if e := proto.AsError(err); e == nil || e.Code != proto.CodeNotFound {
		t.Fatalf("a hook from a non-seat: %v, want not-found", err)
	}
	if r, _ := row(ps(t, h.c, h.iid), acc.Name); r.Agent == nil || r.Agent.State != client.AgentWaiting {
		t.Fatalf("the seat after the refusals: %+v", r.Agent)
	}
	mustCall(t, h.c, h.iid, wire.ManagerAnswer, client.AnswerArgs{Name: acc.Name, Decision: client.AnswerDeny}, nil)
	if res := <-got; !strings.Contains(res.Stdout, `"deny"`) {
		t.Fatalf("the operator's deny printed %q", res.Stdout)
	}
}

// TestClaudeSessionStartCarriesWhatWaited: a DM that waits before the
// session starts goes out as the SessionStart hook's context; the session,
// idle at its prompt with no turn yet, is woken so that context reaches
// the model, and the DM is acked once the model answered.
func TestClaudeSessionStartCarriesWhatWaited(t *testing.T) {
	h := startMeshWith(t, host.Config{Paths: config.Paths{Space: space, StoreDir: t.TempDir()}, Readiness: 20 * time.Second, HookGrace: hookGrace})
	f := h.fakeClaudePersona(t, "cc", true)
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "cc"})
	bob := h.peer(t, "bob", []string{"team"})
	w, err := bob.WatchReceipts()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var sent mesh.Receipt
	waitFor(t, 10*time.Second, func() error {
		var err error
		sent, err = bob.DM(ctxT(t), acc.Name, "before-your-start")
		return err
	})
	agentRow(t, h, acc.Name, func(r client.Row) error {
		if r.Waiting != 1 {
			return fmt.Errorf("%d waiting at the connector", r.Waiting)
		}
		return nil
	})
	f.start()
	if res := goal(t, h.c, h.iid, acc.GoalID, 25*time.Second); res.State != ep.GoalSucceeded {
		t.Fatalf("spawn: %s %+v", res.State, res.Error)
	}
	var start fakeRes
	waitFor(t, 10*time.Second, func() error {
		lines := f.lines("start.log")
		if len(lines) == 0 {
			return fmt.Errorf("no SessionStart yet")
		}
		return json.Unmarshal([]byte(lines[0]), &start)
	})
	if ctx := hookContext(t, start.Stdout); !strings.Contains(ctx, "[DM from bob] before-your-start") {
		t.Fatalf("SessionStart's context: %q", start.Stdout)
	}
	// No turn has carried it yet: the session is woken.
	waitFor(t, 15*time.Second, func() error {
		if typed := f.lines("typed.log"); len(typed) != 1 {
			return fmt.Errorf("typed %q", typed)
		}
		return nil
	})
	if p := noteWith(t, w, sent.ID, func(p mesh.Progress) bool { return p.Reaches(wire.RungInjected) }); p.Reaches(wire.RungAcked) {
		t.Fatalf("acked before the model answered: %+v", p)
	}
	f.hook(fakeCmd{Event: "Stop", Input: map[string]any{}})
	noteWith(t, w, sent.ID, func(p mesh.Progress) bool { return p.Reached == wire.RungAcked })
	if typed := f.lines("typed.log"); len(typed) != 1 {
		t.Fatalf("woken more than once: %q", typed)
	}
}

// TestClaudeAnswerBetweenWaitsReachesItsHook: a person's answer that comes
// while the hook is between two of its waits is what its next wait gets.
func TestClaudeAnswerBetweenWaitsReachesItsHook(t *testing.T) {
	h, _, acc := claudeMesh(t)
	c := h.client(h.op, proto.Caller{Owner: acc.Owner, Actor: acc.Actor, UID: acc.UID})
	in, _ := json.Marshal(map[string]any{"session_id": fakeSession, "hook_event_name": "PermissionRequest",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "make"}})
	res, err := c.Call(ctxT(t), wire.ManagerEndpoint, wire.ManagerHook, client.HookArgs{Event: "PermissionRequest", Input: in}, ep.Self(), ep.On(h.iid))
	if err != nil {
		t.Fatal(err)
	}
	var r client.HookReply
	if err := json.Unmarshal(res.Data, &r); err != nil || !r.Waiting || r.Token == "" {
		t.Fatalf("the hook's first reply %s (%v), want it to wait, with a token", res.Data, err)
	}
	mustCall(t, h.c, h.iid, wire.ManagerAnswer, client.AnswerArgs{Name: acc.Name, Decision: client.AnswerAllow}, nil)
	res, err = c.Call(ctxT(t), wire.ManagerEndpoint, wire.ManagerHookWait, client.HookWaitArgs{Token: r.Token}, ep.Self(), ep.On(h.iid))
	if err != nil {
		t.Fatal(err)
	}
	var after client.HookReply
	if err := json.Unmarshal(res.Data, &after); err != nil || after.Waiting || !strings.Contains(after.Output, `"behavior":"allow"`) {
		t.Fatalf("the wait after the answer: %s (%v)", res.Data, err)
	}
}

// TestHookStreamIsEachEventsOwnHook: `cotal hook --stream`, the one
// process opencode's plugin keeps for its events, is each event's own hook
// (here the claude stand-in's, which the seat reads the same way): a
// turn's end hands over the DM that waited, acked only once a later event
// proves the model had it; a permission waits for the person's answer and
// holds up nothing after it, a line that is no event among them, answered
// with why; the stream's input ending stops a prompt it still waits on,
// which is then no longer answerable, and the stream exits 0.
func TestHookStreamIsEachEventsOwnHook(t *testing.T) {
	h, f, acc := claudeMesh(t)
	stream := func(event string, input map[string]any) fakeRes {
		return f.hook(fakeCmd{Event: event, Input: input, Stream: true})
	}
	stream("UserPromptSubmit", map[string]any{"prompt": "work"})
	agentRow(t, h, acc.Name, agentIs(client.AgentWorking))
	bob := h.peer(t, "bob", []string{"team"})
	w, err := bob.WatchReceipts()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sent, err := bob.DM(ctxT(t), acc.Name, "streamed")
	if err != nil {
		t.Fatal(err)
	}
	noteWith(t, w, sent.ID, func(p mesh.Progress) bool { return strings.HasPrefix(p.Why, "held: in a turn") })
	out := stream("Stop", map[string]any{"stop_hook_active": false})
	if !strings.Contains(hookContext(t, out.Stdout), "[DM from bob] streamed") {
		t.Fatalf("the Stop event's answer through the stream: %+v", out)
	}
	p := noteWith(t, w, sent.ID, func(p mesh.Progress) bool { return p.Reaches(wire.RungInjected) })
	if p.Reaches(wire.RungAcked) {
		t.Fatalf("acked before a later event proved the model had it: %+v", p)
	}
	stream("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}})
	noteWith(t, w, sent.ID, func(p mesh.Progress) bool { return p.Reached == wire.RungAcked })

	ask := func(cmd string) chan fakeRes {
		ch := make(chan fakeRes, 1)
		go func() {
			ch <- stream("PermissionRequest", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}})
		}()
		return ch
	}
	got := ask("touch run-s")
	r := agentRow(t, h, acc.Name, agentIs(client.AgentWaiting))
	if r.Agent.Asks != "approve Bash(touch run-s)" || !r.Agent.Answerable {
		t.Fatalf("waiting on %+v", r.Agent)
	}
	// An event after it reaches the seat, answered while it waits.
	stream("Notification", map[string]any{"notification_type": "permission_prompt", "message": "Claude needs your permission to use Bash"})
	if bad := f.hook(fakeCmd{Raw: `{"id":$ID,"event":"Stop"}`}); bad.Stdout != "" || !strings.Contains(bad.Stderr, "not an event") {
		t.Fatalf("a line without its input: %+v", bad)
	}
	if r := agentRow(t, h, acc.Name, agentIs(client.AgentWaiting)); r.Agent.Asks != "approve Bash(touch run-s)" || !r.Agent.Answerable {
		t.Fatalf("after the events beside it: %+v", r.Agent)
	}
	select {
	case res := <-got:
		t.Fatalf("the prompt was answered by nobody: %+v", res)
	default:
	}
	var ans client.AnswerReply
	mustCall(t, h.c, h.iid, wire.ManagerAnswer, client.AnswerArgs{Name: acc.Name, Decision: client.AnswerAllow}, &ans)
	res := <-got
	var dec struct {
		HookSpecificOutput struct {
			Decision struct{ Behavior string }
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &dec); err != nil || dec.HookSpecificOutput.Decision.Behavior != "allow" {
		t.Fatalf("the stream answered %+v (%v), want an allow decision", res, err)
	}

	got = ask("rm -rf build")
	agentRow(t, h, acc.Name, agentIs(client.AgentWaiting))
	if end := f.hook(fakeCmd{EndStream: true}); end.Code != 0 {
		t.Fatalf("the stream at the end of its input: %+v", end)
	}
	if res := <-got; res.Stdout != "" {
		t.Fatalf("a prompt the stream stopped was answered %q", res.Stdout)
	}
	r = agentRow(t, h, acc.Name, agentIs(client.AgentIdle))
	if r.Agent.Answerable {
		t.Fatalf("after the stream ended: %+v, want not answerable", r.Agent)
	}
}
