package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/modelserver"
)

// seatArgv is the command line of a seat's process, from /proc.
func seatArgv(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatalf("the command line of pid %d: %v", pid, err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// TestClaudeCodeResumesItsSession: Claude Code in a seat has one turn (a
// DM it answers), then down --preserve-state and up: the resumed seat runs
// claude --resume with the session id its SessionStart hook reported, under
// the same lifecycle, ps says from which session, and the model server
// sees the resumed conversation (the first DM and the model's answer to it
// in the history of the next turn's request).
func TestClaudeCodeResumesItsSession(t *testing.T) {
	t.Parallel()
	w := newClaudeWorld(t, map[string]any{}, true)
	home := t.TempDir()
	const space = "clauderesume"
	run := func(args ...string) string {
		t.Helper()
		out, stderr, code := runInEnv(t, home, w.dir, space, w.env, args...)
		if code != 0 {
			t.Fatalf("cotal %v: exit %d\n%s\n%s", args, code, out, stderr)
		}
		return out
	}
	run("up", "--detach")
	t.Cleanup(func() { runInEnv(t, home, w.dir, space, w.env, "down", "--with-agents") })
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(home, "spaces", space, "mesh.log"))
			t.Logf("mesh log:\n%s", b)
		}
	})
	alice := mint(t, home, "alice", "--space", space)
	if out := run("spawn", "cc"); !strings.Contains(out, "ready: cc is up") {
		t.Fatalf("spawn cc:\n%s", out)
	}
	before := seatRowJSON(t, home, w.dir, space, "cc")
	if before.Session == "" {
		t.Fatalf("cc reported no session: %+v", before)
	}
	uid := resumeRowsIn(t, home, w.dir, space)["cc"].LifecycleUID

	w.answerDM("first-turn-7", "alice", "pong-first", nil)
	run("--creds", alice.Creds, "send", "dm", "cc", "first-turn-7 please")
	waitForDM(t, w.srv, "cc", home, w.dir, space, alice.Creds, "pong-first")
	waitFor(t, 30*time.Second, func() error {
		if r := seatRowJSON(t, home, w.dir, space, "cc"); r.Agent == nil || r.Agent.State != "idle" {
			return fmt.Errorf("cc after its turn: %+v", r.Agent)
		}
		return nil
	})

	if out := run("down", "--preserve-state"); !strings.Contains(out, "1 seat(s) preserved: cc") {
		t.Fatalf("down --preserve-state:\n%s", out)
	}
	if out := run("up", "--detach"); !strings.Contains(out, "resumed 1 seat(s)") {
		t.Fatalf("up after down --preserve-state does not say it resumed cc:\n%s", out)
	}
	var row resumeRow
	waitFor(t, 60*time.Second, func() error {
		row = resumeRowsIn(t, home, w.dir, space)["cc"]
		if row.State != "ready" || row.Process != "running" {
			return fmt.Errorf("resumed cc: %+v\nscreen:\n%s", row, ccScreen(t, home, w.dir, space))
		}
		return nil
	})
	if row.LifecycleUID != uid || row.ResumedMs == 0 || row.ResumedFrom != before.Session {
		t.Fatalf("resumed cc: %+v; want lifecycle %s, resumed from session %s", row, uid, before.Session)
	}
	argv := seatArgv(t, row.PID)
	if i := slices.Index(argv, "--resume"); i < 0 || i+1 >= len(argv) || argv[i+1] != before.Session {
		t.Fatalf("the resumed seat runs %q; want --resume %s", argv, before.Session)
	}
	ps, _, _ := runInEnv(t, home, w.dir, space, w.env, "ps")
	if !strings.Contains(ps, "cc: resumed ") || !strings.Contains(ps, "from session "+before.Session) {
		t.Errorf("ps does not say cc resumed from its session:\n%s", ps)
	}

	// The next turn carries the first one in its history.
	w.answerDM("second-turn-8", "alice", "pong-second", nil)
	run("--creds", alice.Creds, "send", "dm", "cc", "second-turn-8 please")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := w.srv.Wait(ctx, func(r *modelserver.Request) bool {
		return r.Kind == modelserver.Main && strings.Contains(r.New, "second-turn-8 please")
	})
	if err != nil {
		t.Fatalf("the model never got the DM after the resume: %v\nscreen:\n%s", err, ccScreen(t, home, w.dir, space))
	}
	var asked, answered bool
	for _, m := range req.Messages {
		asked = asked || strings.Contains(m.Text, "first-turn-7 please")
		answered = answered || (m.Role == "assistant" && m.Text == "answered first-turn-7")
	}
	if !asked || !answered {
		t.Errorf("the resumed conversation lacks the first turn (its DM %v, the model's answer %v)", asked, answered)
	}
	waitForDM(t, w.srv, "cc", home, w.dir, space, alice.Creds, "pong-second")
}

// resumeRowsIn is resumeRows for another space than "seats".
func resumeRowsIn(t *testing.T, home, dir, space string) map[string]resumeRow {
	t.Helper()
	out, stderr, code := runIn2(t, home, dir, space, "ps", "--json")
	if code != 0 {
		t.Fatalf("ps --json: exit %d: %s", code, stderr)
	}
	return parseResumeRows(t, out)
}

// TestCodexResumesItsSession: Codex in a seat has one turn, then down
// --preserve-state and up: the resumed seat runs `codex resume <session>`
// with the session its hooks reported, under the same lifecycle, and the
// model sees the first turn in the next one's history.
func TestCodexResumesItsSession(t *testing.T) {
	t.Parallel()
	w := newCodexWorld(t, "on-request", "workspace-write")
	home := t.TempDir()
	const space = "codexresume"
	env := []string{w.path}
	run := func(args ...string) string {
		t.Helper()
		out, stderr, code := runInEnv(t, home, w.dir, space, env, args...)
		if code != 0 {
			t.Fatalf("cotal %v: exit %d\n%s\n%s", args, code, out, stderr)
		}
		return out
	}
	run("up", "--detach")
	t.Cleanup(func() { runInEnv(t, home, w.dir, space, env, "down", "--with-agents") })
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(home, "spaces", space, "mesh.log"))
			t.Logf("mesh log:\n%s", b)
		}
	})
	alice := mint(t, home, "alice", "--space", space)
	if out := run("spawn", "cx"); !strings.Contains(out, "ready: cx is up") {
		t.Fatalf("spawn cx:\n%s", out)
	}
	uid := resumeRowsIn(t, home, w.dir, space)["cx"].LifecycleUID
	w.answerDM("first-turn-5", "alice", "pong-first", nil)
	run("--creds", alice.Creds, "send", "dm", "cx", "first-turn-5 please")
	waitForDM(t, w.srv, "cx", home, w.dir, space, alice.Creds, "pong-first")
	var session string
	waitFor(t, 30*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "cx")
		if r.Agent == nil || r.Agent.State != "idle" || r.Session == "" {
			return fmt.Errorf("cx after its turn: %+v / %+v", r, r.Agent)
		}
		session = r.Session
		return nil
	})

	if out := run("down", "--preserve-state"); !strings.Contains(out, "1 seat(s) preserved: cx") {
		t.Fatalf("down --preserve-state:\n%s", out)
	}
	if out := run("up", "--detach"); !strings.Contains(out, "resumed 1 seat(s)") {
		t.Fatalf("up after down --preserve-state does not say it resumed cx:\n%s", out)
	}
	var row resumeRow
	waitFor(t, 60*time.Second, func() error {
		row = resumeRowsIn(t, home, w.dir, space)["cx"]
		if row.State != "ready" || row.Process != "running" {
			out, _, _ := runIn2(t, home, w.dir, space, "screen", "cx")
			return fmt.Errorf("resumed cx: %+v\nscreen:\n%s", row, out)
		}
		return nil
	})
	if row.LifecycleUID != uid || row.ResumedFrom != session {
		t.Fatalf("resumed cx: %+v; want lifecycle %s, resumed from session %s", row, uid, session)
	}
	argv := seatArgv(t, row.PID)
	if i := slices.Index(argv, "resume"); i < 0 || i+1 >= len(argv) || argv[i+1] != session {
		t.Fatalf("the resumed seat runs %q; want resume %s", argv, session)
	}

	w.answerDM("second-turn-6", "alice", "pong-second", nil)
	run("--creds", alice.Creds, "send", "dm", "cx", "second-turn-6 please")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := w.srv.Wait(ctx, func(r *modelserver.Request) bool {
		return r.Kind == modelserver.Main && strings.Contains(r.New, "second-turn-6 please")
	})
	if err != nil {
		out, _, _ := runIn2(t, home, w.dir, space, "screen", "cx")
		t.Fatalf("the model never got the DM after the resume: %v\nscreen:\n%s", err, out)
	}
	var asked, answered bool
	for _, m := range req.Messages {
		asked = asked || strings.Contains(m.Text, "first-turn-5 please")
		answered = answered || (m.Role == "assistant" && m.Text == "answered first-turn-5")
	}
	if !asked || !answered {
		t.Errorf("the resumed conversation lacks the first turn (its DM %v, the model's answer %v)", asked, answered)
	}
	waitForDM(t, w.srv, "cx", home, w.dir, space, alice.Creds, "pong-second")
}

// TestOpencodeResumesItsSession: opencode in a seat has one turn, then
// down --preserve-state and up: the resumed seat runs opencode --session
// with the session its plugin reported, under the same lifecycle, and the
// model sees the first turn in the next one's history.
func TestOpencodeResumesItsSession(t *testing.T) {
	t.Parallel()
	w := newOpencodeWorld(t)
	home := t.TempDir()
	const space = "opencoderesume"
	run := func(args ...string) string { // opencode may take minutes to come up
		t.Helper()
		out, stderr, code := runFor(t, spawnTimeout, home, w.dir, space, w.env, args...)
		if code != 0 {
			t.Fatalf("cotal %v: exit %d\n%s\n%s", args, code, out, stderr)
		}
		return out
	}
	run("up", "--detach")
	t.Cleanup(func() { runInEnv(t, home, w.dir, space, w.env, "down", "--with-agents") })
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(home, "spaces", space, "mesh.log"))
			t.Logf("mesh log:\n%s", b)
		}
	})
	alice := mint(t, home, "alice", "--space", space)
	if out := run("spawn", "oc"); !strings.Contains(out, "ready: oc is up") {
		t.Fatalf("spawn oc:\n%s", out)
	}
	uid := resumeRowsIn(t, home, w.dir, space)["oc"].LifecycleUID
	w.answerDM("first-turn-3", "alice", "pong-first", nil)
	run("--creds", alice.Creds, "send", "dm", "oc", "first-turn-3 please")
	waitForDM(t, w.srv, "oc", home, w.dir, space, alice.Creds, "pong-first")
	var session string
	waitFor(t, 60*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "oc")
		if r.Agent == nil || r.Agent.State != "idle" || r.Session == "" {
			return fmt.Errorf("oc after its turn: %+v / %+v", r, r.Agent)
		}
		session = r.Session
		return nil
	})

	if out := run("down", "--preserve-state"); !strings.Contains(out, "1 seat(s) preserved: oc") {
		t.Fatalf("down --preserve-state:\n%s", out)
	}
	run("up", "--detach")
	var row resumeRow
	waitFor(t, 240*time.Second, func() error {
		row = resumeRowsIn(t, home, w.dir, space)["oc"]
		if row.State != "ready" || row.Process != "running" {
			return fmt.Errorf("resumed oc: %+v", row)
		}
		return nil
	})
	if row.LifecycleUID != uid || row.ResumedFrom != session {
		t.Fatalf("resumed oc: %+v; want lifecycle %s, resumed from session %s", row, uid, session)
	}
	argv := seatArgv(t, row.PID)
	if i := slices.Index(argv, "--session"); i < 0 || i+1 >= len(argv) || argv[i+1] != session {
		t.Fatalf("the resumed seat runs %q; want --session %s", argv, session)
	}
	waitFor(t, 240*time.Second, func() error {
		if r := seatRowJSON(t, home, w.dir, space, "oc"); r.Agent == nil || r.Agent.State != "idle" {
			return fmt.Errorf("resumed oc: %+v", r.Agent)
		}
		return nil
	})

	w.answerDM("second-turn-4", "alice", "pong-second", nil)
	run("--creds", alice.Creds, "send", "dm", "oc", "second-turn-4 please")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	req, err := w.srv.Wait(ctx, func(r *modelserver.Request) bool {
		return r.Kind == modelserver.Main && strings.Contains(r.New, "second-turn-4 please")
	})
	if err != nil {
		out, _, _ := runIn2(t, home, w.dir, space, "screen", "oc")
		t.Fatalf("the model never got the DM after the resume: %v\nscreen:\n%s", err, out)
	}
	var asked, answered bool
	for _, m := range req.Messages {
		asked = asked || strings.Contains(m.Text, "first-turn-3 please")
		answered = answered || (m.Role == "assistant" && m.Text == "answered first-turn-3")
	}
	if !asked || !answered {
		t.Errorf("the resumed conversation lacks the first turn (its DM %v, the model's answer %v)", asked, answered)
	}
	waitForDM(t, w.srv, "oc", home, w.dir, space, alice.Creds, "pong-second")
}
