package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/modelserver"
	"github.com/cotal-go/cotal/internal/testutil"
)

// Claude Code itself (the pinned npm release, which .ci/run installs) in a
// seat, against a scripted model server on loopback, in a private HOME
// where its first run is done: nothing reaches a real model.

// claudeWorld is one claude persona's surroundings: the scripted model,
// Claude Code's private HOME, the project holding the persona, and the
// PATH that finds the claude binary.
type claudeWorld struct {
	srv  *modelserver.Server
	home string // Claude Code's HOME
	dir  string // the project: the mesh runs here, and so does the seat
	path string // PATH=... with the harness first
	// env is the mesh's own environment for the harness: PATH, and Claude
	// Code's switches off (updates, telemetry), which reach the seat as
	// its family.
	env []string
}

// claudeKey is the API key the seats present; the scripted server takes
// any.
const claudeKey = "sk-ant-cotal-test-0123456789abcdefghij"

// newClaudeWorld makes the world. settings are Claude Code's own user
// settings; trusted says whether the project's folder was trusted before
// (else Claude Code asks at its start).
func newClaudeWorld(t testing.TB, settings map[string]any, trusted bool) *claudeWorld {
	t.Helper()
	claude := testutil.Harness(t, "claude")
	srv, err := modelserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	w := &claudeWorld{srv: srv, home: t.TempDir(), path: "PATH=" + filepath.Dir(claude) + string(os.PathListSeparator) + os.Getenv("PATH")}
	w.env = []string{w.path, "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1"}
	w.dir = project(t, map[string]string{"cc": fmt.Sprintf(
		"agent: claude\nenv:\n  HOME: %q\n  ANTHROPIC_BASE_URL: %q\n  ANTHROPIC_API_KEY: %q\n",
		w.home, srv.URL(), claudeKey)})
	state := map[string]any{
		"hasCompletedOnboarding":  true,
		"hasSeenAutoDefaultNudge": true,
		"projects":                map[string]any{w.dir: map[string]any{"hasTrustDialogAccepted": trusted}},
		"customApiKeyResponses":   map[string]any{"approved": []string{claudeKey[len(claudeKey)-20:]}, "rejected": []string{}},
	}
	writeJSONFile(t, filepath.Join(w.home, ".claude.json"), state)
	writeJSONFile(t, filepath.Join(w.home, ".claude", "settings.json"), settings)
	return w
}

func writeJSONFile(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// answerDM scripts the model's answer to a DM carrying trigger: it loads
// the cotal_dm tool, sends reply to whom, and ends its turn. held, when
// set, holds the first step until it is closed.
func (w *claudeWorld) answerDM(trigger, to, reply string, held chan struct{}) {
	first := modelserver.Use("ToolSearch", `{"query":"select:mcp__cotal__cotal_dm","max_results":1}`)
	if held != nil {
		first = first.HeldBy(held)
	}
	in, _ := json.Marshal(map[string]string{"to": to, "text": reply})
	w.srv.Chain(trigger, modelserver.NewContains(trigger), first,
		modelserver.Use("mcp__cotal__cotal_dm", string(in)), modelserver.Say("answered "+trigger))
}

// needsYouLine is cc's NEEDS YOU entry for the permission prompt, with
// the key that answers it.
var needsYouLine = regexp.MustCompile(`│◐ cc  waiting \d+s  p:  approve Bash\(touch run-bbb2\)`)

// psAgent is a seat's row of `cotal ps --json`, as these tests read it.
type psAgent struct {
	Name    string `json:"name"`
	Mesh    string `json:"mesh"`
	State   string `json:"state"`
	Session string `json:"session"`
	Waiting int    `json:"waiting"`
	Agent   *struct {
		State      string `json:"state"`
		Kind       string `json:"kind"`
		Asks       string `json:"asks"`
		Source     string `json:"source"`
		SinceMs    int64  `json:"sinceMs"`
		AtPrompt   bool   `json:"atPrompt"`
		Answerable bool   `json:"answerable"`
	} `json:"agent"`
}

func seatRowJSON(t testing.TB, home, dir, space, name string) psAgent {
	t.Helper()
	out, stderr, code := runIn2(t, home, dir, space, "ps", "--json")
	if code != 0 {
		t.Fatalf("ps: exit %d: %s", code, stderr)
	}
	var cs struct {
		Rows []psAgent `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		t.Fatalf("ps --json: %v\n%s", err, out)
	}
	for _, r := range cs.Rows {
		if r.Name == name {
			return r
		}
	}
	return psAgent{}
}

// receiptJSON is `cotal send ... --wait <rung> --json`, with its times.
type receiptJSON struct {
	ID       string `json:"id"`
	Reached  bool   `json:"reached"`
	Progress []struct {
		Reached  string    `json:"reached"`
		Injected bool      `json:"injected"`
		At       time.Time `json:"at"`
	} `json:"progress"`
}

// TestClaudeCodeInASeat: Claude Code in a seat is ready by its own start;
// a DM is answered through its cotal tools with nobody at the keys, and
// the sender's receipt reaches acked only after the model had it; it
// reads working during its turn and idle after. A permission prompt has
// it waiting in ps, the roster and NEEDS YOU (how long after the model
// asked is logged); a peer's DM meanwhile neither answers the prompt nor is lost; the person approves
// from the dashboard, the command runs, and the waiting DM is then
// delivered and answered.
func TestClaudeCodeInASeat(t *testing.T) {
	t.Parallel()
	w := newClaudeWorld(t, map[string]any{"permissions": map[string]any{"ask": []string{"Bash"}}}, true)
	home := t.TempDir()
	const space = "claude"
	d := startSizedEnv(t, home, w.dir, 160, 45, w.env, "--space", space)
	d.waitScreen("HOSTING", "SEATS · 0")
	t.Cleanup(func() { runIn2(t, home, w.dir, space, "down", "--with-agents") })
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(home, "spaces", space, "mesh.log"))
			t.Logf("mesh log:\n%s", b)
		}
	})
	alice := mint(t, home, "alice", "--space", space)

	out, stderr, code := runIn2(t, home, w.dir, space, "spawn", "cc")
	if code != 0 || !strings.Contains(out, "ready: cc is up") {
		t.Fatalf("spawn cc: exit %d\n%s\n%s", code, out, stderr)
	}
	r := seatRowJSON(t, home, w.dir, space, "cc")
	if r.Session == "" || r.Agent == nil || r.Agent.State != "idle" || !strings.HasPrefix(r.Agent.Source, "hook SessionStart") {
		t.Fatalf("cc after spawn: %+v / %+v", r, r.Agent)
	}
	// The mesh's DISABLE_* switches reached Claude Code, its persona
	// naming none: a seat does not update itself when its user said no.
	environ := seatEnviron(t, home, w.dir, space, "cc")
	for _, kv := range []string{"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1"} {
		if !slices.Contains(environ, kv) {
			t.Errorf("%s did not reach the claude seat: %q", kv, environ)
		}
	}

	// A DM, with the model's first step held: it is working meanwhile.
	hold := make(chan struct{})
	w.answerDM("ping-dm-1", "alice", "pong-1", hold)
	type sent struct {
		r   receiptJSON
		err string
	}
	got := make(chan sent, 1)
	go func() {
		out, stderr, _ := runIn2(t, home, w.dir, space, "--creds", alice.Creds, "send", "dm", "cc", "ping-dm-1 please", "--wait", "acked", "--timeout", "60s", "--json")
		var r receiptJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			got <- sent{err: fmt.Sprintf("%v: %s %s", err, out, stderr)}
			return
		}
		got <- sent{r: r}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	carried, err := w.srv.Wait(ctx, func(r *modelserver.Request) bool {
		return r.Kind == modelserver.Main && strings.Contains(r.New, "ping-dm-1 please")
	})
	if err != nil {
		ps, _, _ := runIn2(t, home, w.dir, space, "ps")
		dl, _, _ := runIn2(t, home, w.dir, space, "deliveries")
		t.Fatalf("the model never got the DM: %v\nps:\n%s\ndeliveries:\n%s\nseat screen:\n%s", err, ps, dl, ccScreen(t, home, w.dir, space))
	}
	waitFor(t, 10*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "cc")
		if r.Agent == nil || r.Agent.State != "working" || r.Mesh != "working" {
			return fmt.Errorf("during its turn: %+v / %+v", r, r.Agent)
		}
		return nil
	})
	close(hold)
	s := <-got
	if s.err != "" {
		t.Fatal(s.err)
	}
	if !s.r.Reached || len(s.r.Progress) != 1 || s.r.Progress[0].Reached != "acked" || !s.r.Progress[0].Injected {
		t.Fatalf("the receipt: %+v", s.r)
	}
	if at := s.r.Progress[0].At; !at.After(carried.At) {
		t.Fatalf("acked at %s, before the model request carrying the DM (%s)", at, carried.At)
	}
	waitForDM(t, w.srv, "cc", home, w.dir, space, alice.Creds, "pong-1")
	waitFor(t, 30*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "cc")
		if r.Agent == nil || r.Agent.State != "idle" || !r.Agent.AtPrompt || r.Mesh != "idle" {
			return fmt.Errorf("after its turn: %+v / %+v", r, r.Agent)
		}
		return nil
	})
	if n := countRequests(w.srv, modelserver.Classifier); n != 0 {
		t.Errorf("%d classifier requests: the cotal tools were not allowed outright", n)
	}

	// A permission prompt.
	w.srv.Chain("bash", modelserver.NewContains("hello-bash-1"),
		modelserver.Use("Bash", `{"command":"touch run-bbb2","description":"make the marker file"}`),
		modelserver.Say("done bash"))
	runIn2(t, home, w.dir, space, "--creds", alice.Creds, "send", "dm", "cc", "hello-bash-1 now")
	asked, err := w.srv.Wait(ctx, func(r *modelserver.Request) bool { return r.Chain == "bash" })
	if err != nil {
		t.Fatalf("the model never got the second DM: %v", err)
	}
	// The prompt is Claude Code's to raise (its PreToolUse and
	// PermissionRequest hooks, after the model's answer); from the moment
	// its hook reported it, ps, the roster and NEEDS YOU say so (the time
	// from the model asking is logged; BenchmarkPromptToWaiting measures it).
	waitingReported(t, home, w.dir, space, "cc", "approve Bash(touch run-bbb2)", asked.At, d, needsYouLine)
	// A peer's DM meanwhile: a digit and an Enter would answer the prompt
	// if they were typed.
	w.answerDM("ping-dm-2", "alice", "pong-2", nil)
	out, stderr, code = runIn2(t, home, w.dir, space, "--creds", alice.Creds, "send", "dm", "cc", "1\nping-dm-2 meanwhile", "--wait", "taken", "--timeout", "20s")
	if code != 0 {
		t.Fatalf("send while it waits: exit %d\n%s\n%s", code, out, stderr)
	}
	waitFor(t, 10*time.Second, func() error {
		if r := seatRowJSON(t, home, w.dir, space, "cc"); r.Waiting != 1 || r.Agent == nil || r.Agent.State != "waiting" {
			return fmt.Errorf("the DM does not wait beside the prompt: %+v / %+v", r, r.Agent)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(w.dir, "run-bbb2")); err == nil {
		t.Fatal("the command ran before anyone approved it")
	}
	if scr := ccScreen(t, home, w.dir, space); !strings.Contains(scr, "Do you want to proceed?") {
		t.Fatalf("the prompt is gone from cc's screen before anyone answered it:\n%s", scr)
	}

	// The person approves from the dashboard.
	d.keys("Tab")
	d.waitLine(`SEATS · 1`)
	d.keys("p")
	d.waitScreen("cc ASKS: approve Bash(touch run-bbb2)")
	d.keys("y")
	d.waitScreen("approved cc: approve Bash(touch run-bbb2)")
	waitFor(t, 30*time.Second, func() error {
		_, err := os.Stat(filepath.Join(w.dir, "run-bbb2"))
		return err
	})
	waitForDM(t, w.srv, "cc", home, w.dir, space, alice.Creds, "pong-2")
	waitFor(t, 30*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "cc")
		if r.Agent == nil || r.Agent.State != "idle" || r.Waiting != 0 {
			return fmt.Errorf("after the prompt: %+v / %+v", r, r.Agent)
		}
		return nil
	})
	d.waitScreen("nothing waiting - all clear")
	d.quit()
}

// TestClaudeCodeStartUpDialogIsWaiting: a seat whose Claude Code asks at
// its start whether to trust the folder is waiting with that question,
// not ready: spawn ends uncertain saying so, and nothing is typed into the
// dialog (its first choice exits); once the person answers it (here
// typing as the operator, as from an attached terminal) the seat comes
// up.
func TestClaudeCodeStartUpDialogIsWaiting(t *testing.T) {
	t.Parallel()
	w := newClaudeWorld(t, map[string]any{}, false)
	home := t.TempDir()
	const space = "claudedialog"
	if _, stderr, code := runInEnv(t, home, w.dir, space, w.env, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn2(t, home, w.dir, space, "down", "--with-agents") })
	out, stderr, code := runIn2(t, home, w.dir, space, "spawn", "cc")
	if code == 0 || !strings.Contains(out+stderr, "waiting on a dialog at its start") || !strings.Contains(out+stderr, "Accessing workspace") {
		t.Fatalf("spawn at a start-up dialog: exit %d\n%s\n%s\nscreen:\n%s", code, out, stderr, ccScreen(t, home, w.dir, space))
	}
	r := seatRowJSON(t, home, w.dir, space, "cc")
	if r.Agent == nil || r.Agent.State != "waiting" || r.Agent.Kind != "dialog" || r.Agent.Answerable {
		t.Fatalf("ps at the dialog: %+v / %+v", r, r.Agent)
	}
	if _, stderr, code := runIn2(t, home, w.dir, space, "approve", "cc"); code != 1 || !strings.Contains(stderr, "attach to answer it") {
		t.Fatalf("approve at a dialog cotal cannot answer: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runIn2(t, home, w.dir, space, "input", "--keys", "cc", "Down", "Enter"); code != 0 {
		t.Fatalf("answering the dialog: %s", stderr)
	}
	waitFor(t, 30*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "cc")
		if r.State != "ready" || r.Agent == nil || r.Agent.State != "idle" {
			return fmt.Errorf("after the dialog: %+v / %+v", r, r.Agent)
		}
		return nil
	})
}

// seatEnviron is the environment of a seat's process (its pid from ps).
func seatEnviron(t *testing.T, home, dir, space, name string) []string {
	t.Helper()
	out, _, _ := runIn2(t, home, dir, space, "ps", "--json")
	var cs struct {
		Rows []struct {
			Name string `json:"name"`
			PID  int    `json:"pid"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		t.Fatal(err)
	}
	for _, r := range cs.Rows {
		if r.Name == name {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", r.PID))
			if err != nil {
				t.Fatalf("the environment of %s (pid %d): %v", name, r.PID, err)
			}
			return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		}
	}
	t.Fatalf("no seat %s in ps", name)
	return nil
}

// ccScreen is `cotal screen cc`.
func ccScreen(t *testing.T, home, dir, space string) string {
	t.Helper()
	out, _, _ := runIn2(t, home, dir, space, "screen", "cc")
	return out
}

// waitForDM waits until the inbox of creds holds a DM with text, which
// seat's model (answered by srv) sends. A harness on a loaded machine can
// take minutes over one turn (opencode has taken two to start), so the
// wait is long; it polls, so a turn that ends sooner costs nothing. A
// failure says what the model server saw and shows the seat's screen.
func waitForDM(t *testing.T, srv *modelserver.Server, seat, home, dir, space, creds, text string) {
	t.Helper()
	var seen []string
	waitFor(t, 3*time.Minute, func() error {
		out, _, _ := runIn2(t, home, dir, space, "--creds", creds, "inbox", "--json")
		for _, it := range parseInbox(t, out) {
			seen = append(seen, it.text())
			if it.text() == text {
				return nil
			}
		}
		screen, _, _ := runIn2(t, home, dir, space, "screen", seat)
		return fmt.Errorf("no %q in the inbox (so far %q)\nthe model server saw:\n%s\nseat screen:\n%s",
			text, seen, modelLog(srv), screen)
	})
}

// modelLog is one line per request the model server received: its kind,
// the chain that answered and the start of what was new in it.
func modelLog(srv *modelserver.Server) string {
	var b strings.Builder
	for _, r := range srv.Requests() {
		fmt.Fprintf(&b, "  #%d %s %v chain %q: %.120q\n", r.Seq, r.At.Format("15:04:05.000"), r.Kind, r.Chain, r.New)
	}
	if u := srv.Unserved(); len(u) > 0 {
		fmt.Fprintf(&b, "  unserved: %v\n", u)
	}
	if f := srv.Failures(); len(f) > 0 {
		fmt.Fprintf(&b, "  undecodable: %q\n", f)
	}
	return b.String()
}

func countRequests(s *modelserver.Server, k modelserver.Kind) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Kind == k {
			n++
		}
	}
	return n
}
