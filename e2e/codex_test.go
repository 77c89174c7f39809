package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/modelserver"
	"github.com/cotal-go/cotal/internal/testutil"
)

// Codex itself (the pinned npm release) in a seat, against the scripted
// model server speaking the Responses API, in a private CODEX_HOME whose
// config.toml is the user's: its model provider, its approval policy and
// sandbox mode, its project trusted, its update check off.

type codexWorld struct {
	srv  *modelserver.Server
	home string // HOME and CODEX_HOME
	dir  string // the project
	path string
}

const codexKey = "sk-cotal-codex-test-key"

// newCodexWorld makes the world; approval and sandbox are the user's
// approval_policy and sandbox_mode.
func newCodexWorld(t testing.TB, approval, sandbox string) *codexWorld {
	t.Helper()
	codex := testutil.Harness(t, "codex")
	srv, err := modelserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	w := &codexWorld{srv: srv, home: t.TempDir(), path: "PATH=" + filepath.Dir(codex) + string(os.PathListSeparator) + os.Getenv("PATH")}
	w.dir = project(t, map[string]string{"cx": fmt.Sprintf(
		"agent: codex\nenv:\n  HOME: %q\n  CODEX_HOME: %q\n  OPENAI_API_KEY: %q\n", w.home, w.home, codexKey)})
	withPrompt(t, w.dir, "cx")
	cfg := fmt.Sprintf(`model = "scripted"
model_provider = "scripted"
approval_policy = %q
sandbox_mode = %q
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted"
base_url = "%s/v1"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[projects.%q]
trust_level = "trusted"

[tui]
screen_reader_detection_done = true
`, approval, sandbox, srv.URL(), w.dir)
	if err := os.WriteFile(filepath.Join(w.home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

// answerDM scripts the model's answer to a DM carrying trigger: it calls
// the cotal_dm tool (namespaced mcp__cotal) and ends its turn.
func (w *codexWorld) answerDM(trigger, to, reply string, held chan struct{}) {
	in, _ := json.Marshal(map[string]string{"to": to, "text": reply})
	first := modelserver.Use("mcp__cotal__cotal_dm", string(in))
	if held != nil {
		first = first.HeldBy(held)
	}
	w.srv.Chain(trigger, modelserver.NewContains(trigger), first, modelserver.Say("answered "+trigger))
}

// up starts the mesh with a dashboard in tmux and spawns cx.
func (w *codexWorld) up(t *testing.T, space string) (home string, d *tmuxCotal) {
	t.Helper()
	home = t.TempDir()
	d = startSizedEnv(t, home, w.dir, 160, 45, []string{w.path}, "--space", space)
	d.waitScreen("HOSTING", "SEATS · 0")
	t.Cleanup(func() { runIn2(t, home, w.dir, space, "down", "--with-agents") })
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(home, "spaces", space, "mesh.log"))
			t.Logf("mesh log:\n%s", b)
			out, _, _ := runIn2(t, home, w.dir, space, "screen", "cx")
			t.Logf("cx's screen:\n%s", out)
			for _, r := range w.srv.Requests() {
				t.Logf("model request %d (%s, chain %q): new %q", r.Seq, r.Kind, r.Chain, oneLine(r.New, 300))
			}
		}
	})
	out, stderr, code := runIn2(t, home, w.dir, space, "spawn", "cx")
	if code != 0 || !strings.Contains(out, "ready: cx is up") {
		t.Fatalf("spawn cx: exit %d\n%s\n%s", code, out, stderr)
	}
	return home, d
}

// personaPrompt is the prompt of the harness tests' personas.
const personaPrompt = "You are the persona-prompt-7f3a seat: answer peers briefly."

// withPrompt gives the project's persona name personaPrompt as its body.
func withPrompt(t testing.TB, dir, name string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, ".cotal", "agents", name+".md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(personaPrompt + "\n"); err != nil {
		t.Fatal(err)
	}
}

// seatCmdline is the command line of a seat's process (its pid from ps).
func seatCmdline(t *testing.T, home, dir, space, name string) string {
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
		if r.Name == name && r.PID > 0 {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", r.PID))
			if err != nil {
				t.Fatalf("the command line of %s (pid %d): %v", name, r.PID, err)
			}
			return strings.ReplaceAll(string(b), "\x00", " ")
		}
	}
	t.Fatalf("no process of %s in ps:\n%s", name, out)
	return ""
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// sendDM sends a DM as creds and waits for its receipt at rung.
func sendDM(t *testing.T, home, dir, space, creds, to, text, rung string) receiptJSON {
	t.Helper()
	out, stderr, _ := runIn2(t, home, dir, space, "--creds", creds, "send", "dm", to, text, "--wait", rung, "--timeout", "60s", "--json")
	var r receiptJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("send %q: %v: %s %s", text, err, out, stderr)
	}
	return r
}

var codexNeedsYou = regexp.MustCompile(`│◐ cx  waiting \d+s  p:  approve Bash\(touch run-esc\)`)

// TestCodexInASeat: Codex in a seat is ready by its own start (its MCP
// client connected, its prompt on its screen); a DM is answered through
// its cotal tools with nobody at the keys, acked only after the model had
// it; it reads working during its turn and idle after. A command it must
// ask to run has it waiting in ps, the roster and NEEDS YOU (how long
// after the model asked is logged); a peer's DM meanwhile neither answers the prompt nor is lost; the person
// approves from the dashboard, the command runs, and the waiting DM is
// then delivered and answered.
func TestCodexInASeat(t *testing.T) {
	t.Parallel()
	w := newCodexWorld(t, "on-request", "workspace-write")
	const space = "codex"
	home, d := w.up(t, space)
	alice := mint(t, home, "alice", "--space", space)

	r := seatRowJSON(t, home, w.dir, space, "cx")
	if r.Agent == nil || r.Agent.State != "idle" {
		t.Fatalf("cx after spawn: %+v / %+v", r, r.Agent)
	}
	ps, _, _ := runIn2(t, home, w.dir, space, "ps")
	if strings.Contains(ps, "own sandbox") {
		t.Errorf("ps says Codex's sandbox cannot run:\n%s", ps)
	}

	// A DM, with the model's first step held: it is working meanwhile.
	hold := make(chan struct{})
	w.answerDM("ping-dm-1", "alice", "pong-1", hold)
	got := make(chan receiptJSON, 1)
	go func() { got <- sendDM(t, home, w.dir, space, alice.Creds, "cx", "ping-dm-1 please", "acked") }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	carried, err := w.srv.Wait(ctx, func(r *modelserver.Request) bool {
		return r.Kind == modelserver.Main && strings.Contains(r.New, "ping-dm-1 please")
	})
	if err != nil {
		t.Fatalf("the model never got the DM: %v", err)
	}
	if !carried.HasTool("mcp__cotal__cotal_dm") {
		t.Fatalf("the model request offers no cotal_dm: %q", carried.Tools)
	}
	// The persona's prompt reached the model, and never the seat's argv.
	if !carried.Contains(personaPrompt) {
		t.Errorf("the model request lacks the persona's prompt")
	}
	if argv := seatCmdline(t, home, w.dir, space, "cx"); strings.Contains(argv, personaPrompt) {
		t.Errorf("the persona's prompt is on argv: %s", argv)
	}
	waitFor(t, 10*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "cx")
		if r.Agent == nil || r.Agent.State != "working" || r.Mesh != "working" {
			return fmt.Errorf("during its turn: %+v / %+v", r, r.Agent)
		}
		return nil
	})
	select {
	case rc := <-got:
		t.Fatalf("acked before the model answered: %+v", rc)
	default:
	}
	close(hold)
	rc := <-got
	if !rc.Reached || len(rc.Progress) != 1 || rc.Progress[0].Reached != "acked" || !rc.Progress[0].Injected {
		t.Fatalf("the receipt: %+v", rc)
	}
	if at := rc.Progress[0].At; !at.After(carried.At) {
		t.Fatalf("acked at %s, before the model request carrying the DM (%s)", at, carried.At)
	}
	waitForDM(t, w.srv, "cx", home, w.dir, space, alice.Creds, "pong-1")
	waitFor(t, 30*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "cx")
		if r.Agent == nil || r.Agent.State != "idle" || !r.Agent.AtPrompt || r.Mesh != "idle" || r.Session == "" {
			return fmt.Errorf("after its turn: %+v / %+v", r, r.Agent)
		}
		return nil
	})

	// A command it must ask to run (outside its sandbox).
	w.srv.Chain("esc", modelserver.NewContains("hello-esc-1"),
		modelserver.Use("exec_command", `{"cmd":"touch run-esc","sandbox_permissions":"require_escalated","justification":"make the marker file"}`),
		modelserver.Say("done esc"))
	runIn2(t, home, w.dir, space, "--creds", alice.Creds, "send", "dm", "cx", "hello-esc-1 now")
	asked, err := w.srv.Wait(ctx, func(r *modelserver.Request) bool { return r.Chain == "esc" })
	if err != nil {
		t.Fatalf("the model never got the second DM: %v", err)
	}
	waitingReported(t, home, w.dir, space, "cx", "approve Bash(touch run-esc)", asked.At, d, codexNeedsYou)
	// A peer's DM meanwhile: "y" and an Enter would answer Codex's own
	// dialog if they were typed.
	w.answerDM("ping-dm-2", "alice", "pong-2", nil)
	if out, stderr, code := runIn2(t, home, w.dir, space, "--creds", alice.Creds, "send", "dm", "cx", "y\nping-dm-2 meanwhile", "--wait", "taken", "--timeout", "20s"); code != 0 {
		t.Fatalf("send while it waits: exit %d\n%s\n%s", code, out, stderr)
	}
	waitFor(t, 10*time.Second, func() error {
		if r := seatRowJSON(t, home, w.dir, space, "cx"); r.Waiting != 1 || r.Agent == nil || r.Agent.State != "waiting" {
			return fmt.Errorf("the DM does not wait beside the prompt: %+v / %+v", r, r.Agent)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(w.dir, "run-esc")); err == nil {
		t.Fatal("the command ran before anyone approved it")
	}

	// The person approves from the dashboard.
	d.keys("Tab")
	d.waitLine(`SEATS · 1`)
	d.keys("p")
	d.waitScreen("cx ASKS: approve Bash(touch run-esc)")
	d.keys("y")
	d.waitScreen("approved cx: approve Bash(touch run-esc)")
	waitFor(t, 30*time.Second, func() error {
		_, err := os.Stat(filepath.Join(w.dir, "run-esc"))
		return err
	})
	waitForDM(t, w.srv, "cx", home, w.dir, space, alice.Creds, "pong-2")
	waitFor(t, 30*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "cx")
		if r.Agent == nil || r.Agent.State != "idle" || r.Waiting != 0 {
			return fmt.Errorf("after the prompt: %+v / %+v", r, r.Agent)
		}
		return nil
	})
	d.waitScreen("nothing waiting - all clear")
	d.quit()
}

// TestCodexWorkspaceWriteInASeat: under the common approval_policy =
// "never" with sandbox_mode = "workspace-write", the seat's cotal tools
// run without approval, and a command Codex runs in its own sandbox (bwrap,
// inside the seat's) succeeds.
func TestCodexWorkspaceWriteInASeat(t *testing.T) {
	t.Parallel()
	w := newCodexWorld(t, "never", "workspace-write")
	w.srv.Chain("run", modelserver.NewContains("run-in-sandbox"),
		modelserver.Use("exec_command", `{"cmd":"touch made-in-sandbox && echo sandboxed-ok"}`),
		modelserver.Use("mcp__cotal__cotal_dm", `{"to":"alice","text":"ran it"}`),
		modelserver.Say("done"))
	home := t.TempDir()
	const space = "codexww"
	if _, stderr, code := runInEnv(t, home, w.dir, space, []string{w.path}, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn2(t, home, w.dir, space, "down", "--with-agents") })
	if out, stderr, code := runIn2(t, home, w.dir, space, "spawn", "cx"); code != 0 {
		t.Fatalf("spawn cx: exit %d\n%s\n%s", code, out, stderr)
	}
	alice := mint(t, home, "alice", "--space", space)
	runIn2(t, home, w.dir, space, "--creds", alice.Creds, "send", "dm", "cx", "please run-in-sandbox")
	waitForDM(t, w.srv, "cx", home, w.dir, space, alice.Creds, "ran it")
	if _, err := os.Stat(filepath.Join(w.dir, "made-in-sandbox")); err != nil {
		t.Fatalf("the command did not run: %v", err)
	}
	var result string
	for _, r := range w.srv.Requests() {
		for _, res := range r.Results {
			result += res.Text + "\n"
		}
	}
	if !strings.Contains(result, "sandboxed-ok") || strings.Contains(result, "bwrap") {
		t.Fatalf("the command's result: %s", result)
	}
	if out := ps(t, home, w.dir, space); strings.Contains(out, "own sandbox") {
		t.Fatalf("ps says Codex's sandbox cannot run, yet it ran:\n%s", out)
	}
}

func ps(t *testing.T, home, dir, space string) string {
	t.Helper()
	out, _, _ := runIn2(t, home, dir, space, "ps")
	return out
}

// TestCodexTrustDialogIsWaiting: Codex started in a project its user never
// trusted asks at its start; the seat is waiting on that dialog, not
// ready, and spawn says so; cotal cannot answer it (approve says to
// attach), and a peer's DM meanwhile waits rather than being typed into
// it; answered at the terminal, the seat comes up idle and the DM is
// delivered and answered.
func TestCodexTrustDialogIsWaiting(t *testing.T) {
	t.Parallel()
	w := newCodexWorld(t, "on-request", "workspace-write")
	cfg, err := os.ReadFile(filepath.Join(w.home, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	untrusted := strings.Replace(string(cfg), fmt.Sprintf("[projects.%q]\ntrust_level = \"trusted\"\n", w.dir), "", 1)
	if untrusted == string(cfg) {
		t.Fatal("the world's config names no trusted project")
	}
	if err := os.WriteFile(filepath.Join(w.home, "config.toml"), []byte(untrusted), 0o600); err != nil {
		t.Fatal(err)
	}
	// Codex asks about a project under version control.
	if out, err := exec.Command("git", "init", "-q", w.dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	home := t.TempDir()
	const space = "codexdialog"
	if _, stderr, code := runInEnv(t, home, w.dir, space, []string{w.path}, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn2(t, home, w.dir, space, "down", "--with-agents") })
	screen := func() string { out, _, _ := runIn2(t, home, w.dir, space, "screen", "cx"); return out }
	out, stderr, code := runIn2(t, home, w.dir, space, "spawn", "cx")
	if code == 0 || !strings.Contains(out+stderr, "waiting on a dialog at its start") || !strings.Contains(out+stderr, `"Trust this folder?"`) {
		t.Fatalf("spawn at the trust dialog: exit %d\n%s\n%s\nscreen:\n%s", code, out, stderr, screen())
	}
	r := seatRowJSON(t, home, w.dir, space, "cx")
	if r.Agent == nil || r.Agent.State != "waiting" || r.Agent.Kind != "dialog" || r.Agent.Answerable {
		t.Fatalf("ps at the dialog: %+v / %+v", r, r.Agent)
	}
	if _, stderr, code := runIn2(t, home, w.dir, space, "approve", "cx"); code != 1 || !strings.Contains(stderr, "attach to answer it") {
		t.Fatalf("approve at a dialog cotal cannot answer: exit %d: %s", code, stderr)
	}
	// A peer's DM meanwhile is neither typed into the dialog (its Enter
	// would trust the folder) nor acked; it waits.
	alice := mint(t, home, "alice", "--space", space)
	w.answerDM("ping-trust", "alice", "pong-trust", nil)
	if out, stderr, code := runIn2(t, home, w.dir, space, "--creds", alice.Creds, "send", "dm", "cx", "ping-trust while it asks", "--wait", "taken", "--timeout", "20s"); code != 0 {
		t.Fatalf("send at the dialog: exit %d\n%s\n%s", code, out, stderr)
	}
	waitFor(t, 10*time.Second, func() error {
		if r := seatRowJSON(t, home, w.dir, space, "cx"); r.Waiting != 1 || r.Agent == nil || r.Agent.State != "waiting" {
			return fmt.Errorf("the DM does not wait beside the dialog: %+v / %+v", r, r.Agent)
		}
		return nil
	})
	if scr := screen(); !strings.Contains(scr, "Trust this folder?") {
		t.Fatalf("the dialog is gone with nobody answering it:\n%s", scr)
	}
	if _, stderr, code := runIn2(t, home, w.dir, space, "input", "--keys", "cx", "Enter"); code != 0 {
		t.Fatalf("answering the dialog: %s", stderr)
	}
	waitFor(t, 30*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "cx")
		if r.State != "ready" || r.Agent == nil || r.Agent.State == "waiting" {
			return fmt.Errorf("after the dialog: %+v / %+v\n%s", r, r.Agent, screen())
		}
		return nil
	})
	// Then the waiting DM is delivered and answered.
	waitForDM(t, w.srv, "cx", home, w.dir, space, alice.Creds, "pong-trust")
	waitFor(t, 30*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "cx")
		if r.Agent == nil || r.Agent.State != "idle" || r.Waiting != 0 {
			return fmt.Errorf("after the DM: %+v / %+v", r, r.Agent)
		}
		return nil
	})
}
