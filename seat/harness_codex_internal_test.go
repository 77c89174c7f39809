package seat

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
)

// Codex's screens as tmux draws them (testdata/screens): its prompt, and a
// command's approval dialog, the trust dialog at its start; a turn under
// way is no prompt.
func TestCodexScreenRule(t *testing.T) {
	read := func(name string) []string {
		b, err := os.ReadFile(filepath.Join("testdata", "screens", name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(string(b), "\n")
	}
	for _, tc := range []struct {
		name     string
		lines    []string
		atPrompt bool
		dialog   string
	}{
		{"prompt", read("codex-prompt.txt"), true, ""},
		{"approval", read("codex-ask.txt"), false, "Would you like to run the following command?"},
		{"trust at its start", read("codex-trust.txt"), false, "Trust this folder?"},
		{"a turn under way", []string{"› do it", "", "• Working (4s • esc to interrupt)", "", "› Ask Codex to do anything"}, false, ""},
		{"hooks to review", []string{"  1 hook needs review before it can run.", "› [!]  1  Unnamed hook · modified"}, false, "1 hook needs review before it can run."},
		{"nothing drawn yet", nil, false, ""},
	} {
		got := codexHarness{}.screen(tc.lines)
		if got.atPrompt != tc.atPrompt || got.dialog != tc.dialog || !got.known {
			t.Errorf("%s: %+v, want atPrompt %v dialog %q", tc.name, got, tc.atPrompt, tc.dialog)
		}
	}
}

// TestCodexHookHash: the hash of a hook is the one Codex 0.169 itself
// reported for it (hooks/list's currentHash).
func TestCodexHookHash(t *testing.T) {
	for _, tc := range []struct {
		event, matcher, command string
		timeout                 int
		want                    string
	}{
		{"SessionStart", "", "/opt/cotal/bin/cotal hook SessionStart", 30, "sha256:1d876fcbef5186026ea7aa31d90a00e698673ec3a09401314268b792f30acab4"},
		{"Stop", "", "/opt/cotal/bin/cotal hook Stop", 30, "sha256:07c74c804b03fb5ec8b754fb4fb78f486e0d82070b93dcf319a08f1fdb8bb98e"},
	} {
		got, err := codexHookHash(tc.event, tc.matcher, tc.command, tc.timeout)
		if err != nil || got != tc.want {
			t.Errorf("%s: %s %v, want %s", tc.event, got, err, tc.want)
		}
	}
	if k := codexHookKey("PostToolUse"); k != "/<session-flags>/config.toml:post_tool_use:0:0" {
		t.Errorf("key %s", k)
	}
}

// TestCodexTrustsTheSeatsHooksAndNoOthers asks the real Codex (its app
// server's hooks/list) which hooks it would run with a seat's launch
// arguments: every hook of the seat, trusted; a hook of the user's own
// that they never trusted stays untrusted; and the cotal MCP server gets
// the seat's variables by name and its tools approved.
func TestCodexTrustsTheSeatsHooksAndNoOthers(t *testing.T) {
	codex := testutil.Harness(t, "codex")
	home := t.TempDir()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "hooks.json"), []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo users-own"}]}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	exe := "/opt/with space/cotal"
	args, env, err := codexHarness{}.launch(launchCtx{p: &Persona{}, dir: dir, exe: exe, knobs: []string{"COTAL_CREDS", "COTAL_NAME"}})
	if err != nil || env != nil {
		t.Fatalf("launch: %v %v", env, err)
	}
	if !slices.Contains(args, "--no-daemon") {
		t.Errorf("args %q: the seat's Codex may use a shared background server outside the seat", args)
	}
	for _, want := range []string{`mcp_servers.cotal.env_vars=["COTAL_CREDS","COTAL_NAME"]`, `mcp_servers.cotal.default_tools_approval_mode="approve"`} {
		if !slices.Contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
	flags := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--no-daemon" })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, codex, append([]string{"app-server"}, flags...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "HOME="+home, "OPENAI_API_KEY=sk-test")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	rd := bufio.NewReader(out)
	call := func(id int, method string, params any) json.RawMessage {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := in.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		for {
			line, err := rd.ReadBytes('\n')
			if err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(line, &m) == nil && m.ID != nil && *m.ID == id {
				if m.Error != nil {
					t.Fatalf("%s: %s", method, m.Error)
				}
				return m.Result
			}
		}
	}
	call(0, "initialize", map[string]any{"clientInfo": map[string]string{"name": "cotal-test", "version": "1"}})
	_, _ = in.Write([]byte(`{"jsonrpc":"2.0","method":"initialized"}` + "\n"))
	var list struct {
		Data []struct {
			Hooks []struct {
				Key, Command, TrustStatus, EventName string
			} `json:"hooks"`
			Warnings []string `json:"warnings"`
			Errors   []any    `json:"errors"`
		} `json:"data"`
	}
	if err := json.Unmarshal(call(1, "hooks/list", map[string]any{"cwds": []string{dir}}), &list); err != nil || len(list.Data) != 1 {
		t.Fatalf("hooks/list: %v %+v", err, list)
	}
	seen := map[string]string{}
	for _, h := range list.Data[0].Hooks {
		seen[h.Command] = h.TrustStatus
	}
	t.Logf("hooks: %v; warnings %q", seen, list.Data[0].Warnings)
	for _, e := range codexHookEvents {
		cmd := shellQuote(exe) + " hook " + e.event
		if seen[cmd] != "trusted" {
			t.Errorf("the seat's %s hook is %q, want trusted", e.event, seen[cmd])
		}
	}
	if seen["echo users-own"] != "untrusted" {
		t.Errorf("the user's own hook is %q, want it left untrusted", seen["echo users-own"])
	}
	if len(list.Data[0].Errors) != 0 {
		t.Errorf("hook errors: %v", list.Data[0].Errors)
	}
	if n := len(seen); n != len(codexHookEvents)+1 {
		t.Errorf("%d hooks, want the seat's %d and the user's one: %v", n, len(codexHookEvents), seen)
	}
}
