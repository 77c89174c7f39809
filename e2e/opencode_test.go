package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/modelserver"
	"github.com/cotal-go/cotal/internal/testutil"
)

// opencode itself (the pinned npm release) in a seat, against the scripted
// model server speaking Chat Completions, in a private HOME. The user's
// own configuration is in all three places opencode reads it from: their
// model provider in the file their OPENCODE_CONFIG names, their defaults in
// their global config, and an inline config of theirs
// (OPENCODE_CONFIG_CONTENT) asking before any shell command; they are
// offline, so their opencode fetches no model catalogue.

type opencodeWorld struct {
	srv  *modelserver.Server
	home string
	dir  string
	env  []string // the mesh's environment: PATH and the user's opencode variables
}

func newOpencodeWorld(t testing.TB) *opencodeWorld {
	t.Helper()
	oc := testutil.Harness(t, "opencode")
	srv, err := modelserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	w := &opencodeWorld{srv: srv, home: t.TempDir()}
	// On a failure, what opencode itself said: its log says where a start
	// that never drew is waiting.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		logs, _ := filepath.Glob(filepath.Join(w.home, ".local", "share", "opencode", "log", "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			if len(b) > 8<<10 {
				b = b[len(b)-8<<10:]
			}
			t.Logf("opencode's %s (its end):\n%s", filepath.Base(l), b)
		}
	})
	w.dir = project(t, map[string]string{"oc": fmt.Sprintf("agent: opencode\nenv:\n  HOME: %q\n", w.home)})
	withPrompt(t, w.dir, "oc")
	provider := filepath.Join(w.home, "my-provider.json")
	writeJSONFile(t, provider, map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{"scripted": map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"options": map[string]any{"baseURL": srv.URL() + "/v1", "apiKey": "sk-opencode-test"},
			"models":  map[string]any{"m1": map[string]any{"tool_call": true}},
		}},
		"model": "scripted/m1",
	})
	writeJSONFile(t, filepath.Join(w.home, ".config", "opencode", "opencode.json"), map[string]any{
		"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled",
	})
	w.env = []string{
		"PATH=" + filepath.Dir(oc) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"OPENCODE_CONFIG=" + provider,
		`OPENCODE_CONFIG_CONTENT={"permission":{"bash":"ask"}}`,
		// This user is offline, as the tests are: opencode would otherwise
		// fetch its model catalogue at start (models.opencode.ai, then the
		// npm registry), and where the network drops those lookups rather
		// than refusing them its first screen waited minutes for them.
		"OPENCODE_DISABLE_MODELS_FETCH=1",
	}
	return w
}

func (w *opencodeWorld) answerDM(trigger, to, reply string, held chan struct{}) {
	in, _ := json.Marshal(map[string]string{"to": to, "text": reply})
	first := modelserver.Use("cotal_cotal_dm", string(in))
	if held != nil {
		first = first.HeldBy(held)
	}
	w.srv.Chain(trigger, modelserver.NewContains(trigger), first, modelserver.Say("answered "+trigger))
}

var opencodeNeedsYou = regexp.MustCompile(`│◐ oc  waiting \d+s  p:  approve Bash\(touch run-oc\)`)

// TestOpencodeInASeat: opencode in a seat keeps the user's provider and
// rules, with cotal's MCP server and plugin added; it is ready by its own
// start; a DM is answered through its cotal tools with nobody at the keys,
// acked only after the model had it; it reads working during its turn and
// idle after. A shell command its user's rules make it ask about has it
// waiting in ps, the roster and NEEDS YOU (how long after the model asked
// is logged); a peer's DM meanwhile neither answers the prompt nor is
// lost; the person approves from the dashboard, the command runs, and the
// waiting DM is then delivered and answered. Its plugin keeps one hook
// process; killed, the plugin goes on with a hook per event.
func TestOpencodeInASeat(t *testing.T) {
	t.Parallel()
	w := newOpencodeWorld(t)
	const space = "opencode"
	home := t.TempDir()
	d := startSizedEnv(t, home, w.dir, 160, 45, w.env, "--space", space)
	d.waitScreen("HOSTING", "SEATS · 0")
	t.Cleanup(func() { runIn2(t, home, w.dir, space, "down", "--with-agents") })
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(home, "spaces", space, "mesh.log"))
			t.Logf("mesh log:\n%s", b)
			out, _, _ := runIn2(t, home, w.dir, space, "screen", "oc")
			t.Logf("oc's screen:\n%s", out)
			for _, r := range w.srv.Requests() {
				t.Logf("model request %d (%s, chain %q): new %q", r.Seq, r.Kind, r.Chain, oneLine(r.New, 300))
			}
		}
	})
	alice := mint(t, home, "alice", "--space", space)
	// opencode starts slowly on a loaded machine (a Bun program loading
	// its provider catalogue; near 2 min was seen with twenty runnable
	// processes on two cores): its own readiness bound is longer than a
	// command's 30 s, so its spawn ends ready, not uncertain.
	start := time.Now()
	out, stderr, code := runFor(t, spawnTimeout, home, w.dir, space, nil, "spawn", "oc")
	if code != 0 || !strings.Contains(out, "ready: oc is up") {
		t.Fatalf("spawn oc: exit %d, want ready within its bound\n%s\n%s", code, out, stderr)
	}
	waitFor(t, 240*time.Second, func() error {
		if r := seatRowJSON(t, home, w.dir, space, "oc"); r.State != "ready" || r.Agent == nil || r.Agent.State != "idle" {
			return fmt.Errorf("oc: %+v / %+v", r, r.Agent)
		}
		return nil
	})
	t.Logf("oc came up %s after its spawn", time.Since(start).Round(time.Second))
	// It came up without the network: its own log records no catalogue fetch.
	logs, _ := filepath.Glob(filepath.Join(w.home, ".local", "share", "opencode", "log", "*.log"))
	if len(logs) == 0 {
		t.Fatalf("no opencode log under %s", w.home)
	}
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("reading opencode's log: %v", err)
		}
		if strings.Contains(string(b), "models.dev") {
			t.Fatalf("oc fetched its model catalogue at start (%s):\n%s", f, b)
		}
	}
	// Its plugin keeps one hook process, not one per event.
	streams := hookStreams(t, home, w.dir, space, "oc")
	if len(streams) != 1 {
		t.Fatalf("%d `cotal hook --stream` processes under oc, want 1", len(streams))
	}

	hold := make(chan struct{})
	w.answerDM("ping-dm-1", "alice", "pong-1", hold)
	got := make(chan receiptJSON, 1)
	go func() { got <- sendDM(t, home, w.dir, space, alice.Creds, "oc", "ping-dm-1 please", "acked") }()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	carried, err := w.srv.Wait(ctx, func(r *modelserver.Request) bool {
		return r.Kind == modelserver.Main && strings.Contains(r.New, "ping-dm-1 please")
	})
	if err != nil {
		t.Fatalf("the model never got the DM: %v", err)
	}
	// The user's provider answered it, with cotal's tool beside theirs.
	if carried.Model != "m1" || !carried.HasTool("cotal_cotal_dm") || !carried.HasTool("bash") {
		t.Fatalf("the request: model %q, tools %q", carried.Model, carried.Tools)
	}
	if !carried.Contains(personaPrompt) {
		t.Errorf("the model request lacks the persona's prompt")
	}
	if argv := seatCmdline(t, home, w.dir, space, "oc"); strings.Contains(argv, personaPrompt) {
		t.Errorf("the persona's prompt is on argv: %s", argv)
	}
	waitFor(t, 10*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "oc")
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
	waitForDM(t, w.srv, "oc", home, w.dir, space, alice.Creds, "pong-1")
	waitFor(t, 30*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "oc")
		if r.Agent == nil || r.Agent.State != "idle" || !r.Agent.AtPrompt || r.Mesh != "idle" || r.Session == "" {
			return fmt.Errorf("after its turn: %+v / %+v", r, r.Agent)
		}
		return nil
	})

	// A shell command the user's rules make it ask about.
	w.srv.Chain("bash", modelserver.NewContains("hello-bash-1"),
		modelserver.Use("bash", `{"command":"touch run-oc","description":"make the marker file"}`),
		modelserver.Say("done bash"))
	runIn2(t, home, w.dir, space, "--creds", alice.Creds, "send", "dm", "oc", "hello-bash-1 now")
	asked, err := w.srv.Wait(ctx, func(r *modelserver.Request) bool { return r.Chain == "bash" })
	if err != nil {
		t.Fatalf("the model never got the second DM: %v", err)
	}
	waitingReported(t, home, w.dir, space, "oc", "approve Bash(touch run-oc)", asked.At, d, opencodeNeedsYou)
	// A peer's DM meanwhile: an Enter would take the dialog's first
	// choice, "Allow once", if it were typed.
	w.answerDM("ping-dm-2", "alice", "pong-2", nil)
	if out, stderr, code := runIn2(t, home, w.dir, space, "--creds", alice.Creds, "send", "dm", "oc", "y\nping-dm-2 meanwhile", "--wait", "taken", "--timeout", "20s"); code != 0 {
		t.Fatalf("send while it waits: exit %d\n%s\n%s", code, out, stderr)
	}
	waitFor(t, 10*time.Second, func() error {
		if r := seatRowJSON(t, home, w.dir, space, "oc"); r.Waiting != 1 || r.Agent == nil || r.Agent.State != "waiting" {
			return fmt.Errorf("the DM does not wait beside the prompt: %+v / %+v", r, r.Agent)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(w.dir, "run-oc")); err == nil {
		t.Fatal("the command ran before anyone approved it")
	}

	d.keys("Tab")
	d.waitLine(`SEATS · 1`)
	d.keys("p")
	d.waitScreen("oc ASKS: approve Bash(touch run-oc)")
	d.keys("y")
	d.waitScreen("approved oc: approve Bash(touch run-oc)")
	waitFor(t, 30*time.Second, func() error {
		_, err := os.Stat(filepath.Join(w.dir, "run-oc"))
		return err
	})
	waitForDM(t, w.srv, "oc", home, w.dir, space, alice.Creds, "pong-2")
	waitFor(t, 30*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "oc")
		if r.Agent == nil || r.Agent.State != "idle" || r.Waiting != 0 {
			return fmt.Errorf("after the prompt: %+v / %+v", r, r.Agent)
		}
		return nil
	})
	d.waitScreen("nothing waiting - all clear")

	// Asked again, the person answers at the seat's own terminal (as
	// attached: its keys go straight to the pty), not through cotal: the
	// plugin's reply event takes the waiting off NEEDS YOU.
	w.srv.Chain("bash2", modelserver.NewContains("hello-bash-2"),
		modelserver.Use("bash", `{"command":"touch run-oc-2","description":"make the second marker"}`),
		modelserver.Say("done bash 2"))
	runIn2(t, home, w.dir, space, "--creds", alice.Creds, "send", "dm", "oc", "hello-bash-2 now")
	_, err = w.srv.Wait(ctx, func(r *modelserver.Request) bool { return r.Chain == "bash2" })
	if err != nil {
		t.Fatalf("the model never got the third DM: %v", err)
	}
	d.waitScreen("approve Bash(touch run-oc-2)")
	if _, stderr, code := runIn2(t, home, w.dir, space, "input", "--keys", "oc", "Enter"); code != 0 {
		t.Fatalf("answering at the terminal: %s", stderr)
	}
	waitFor(t, 30*time.Second, func() error {
		_, err := os.Stat(filepath.Join(w.dir, "run-oc-2"))
		return err
	})
	waitFor(t, 30*time.Second, func() error {
		r := seatRowJSON(t, home, w.dir, space, "oc")
		if r.Agent == nil || r.Agent.State != "idle" || r.Waiting != 0 {
			return fmt.Errorf("after the answer at its terminal: %+v / %+v", r, r.Agent)
		}
		return nil
	})
	d.waitScreen("nothing waiting - all clear")

	// Its hook process killed: each event from then on runs a hook of its
	// own, and a DM still goes the whole way, acked once the model had it.
	if err := syscall.Kill(streams[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() error {
		if processAlive(streams[0]) {
			return fmt.Errorf("the hook stream %d is still there", streams[0])
		}
		return nil
	})
	w.answerDM("ping-dm-3", "alice", "pong-3", nil)
	rc = sendDM(t, home, w.dir, space, alice.Creds, "oc", "ping-dm-3 after", "acked")
	if !rc.Reached || len(rc.Progress) != 1 || rc.Progress[0].Reached != "acked" || !rc.Progress[0].Injected {
		t.Fatalf("the receipt without the stream: %+v", rc)
	}
	waitForDM(t, w.srv, "oc", home, w.dir, space, alice.Creds, "pong-3")
	if n := len(hookStreams(t, home, w.dir, space, "oc")); n != 0 {
		t.Errorf("%d hook streams after it was killed, want none (the plugin goes on with a hook per event)", n)
	}
	d.quit()
}

// seatProcess is the seat's process, as ps --json has it (in dir).
func seatProcess(t testing.TB, home, dir, space, name string) int {
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
			return r.PID
		}
	}
	t.Fatalf("no process of %s in ps:\n%s", name, out)
	return 0
}

// hookStreams are the `cotal hook --stream` processes among the seat's
// descendants.
func hookStreams(t testing.TB, home, dir, space, name string) []int {
	t.Helper()
	root := seatProcess(t, home, dir, space, name)
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read past its ")".
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
	}
	var out []int
	for pid := range parent {
		under := false
		for p := parent[pid]; p > 1 && !under; p = parent[p] {
			under = p == root
		}
		if !under {
			continue
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"); len(args) == 3 && args[1] == "hook" && args[2] == "--stream" {
			out = append(out, pid)
		}
	}
	return out
}
