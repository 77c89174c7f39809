package seat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/seat/client"
)

// Claude Code's screens as tmux draws them (testdata/screens: at its
// prompt after a turn, at a permission prompt, at the trust question of a
// folder it has not seen): the screen rule tells its prompt from a dialog
// and names the dialog; a turn under way is no prompt.
func TestClaudeScreenRule(t *testing.T) {
	read := func(name string) []string {
		b, err := os.ReadFile(filepath.Join("testdata", "screens", name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(string(b), "\n")
	}
	rule := strings.Repeat("─", 80)
	for _, tc := range []struct {
		name     string
		lines    []string
		atPrompt bool
		dialog   string
	}{
		{"prompt after a turn", read("claude-turn.txt"), true, ""},
		{"permission prompt", read("claude-ask.txt"), false, "Bash command"},
		{"trust question", read("claude-trust.txt"), false, "Accessing workspace:"},
		{"a turn under way", []string{"❯ do it", "", "✻ Crunching… (esc to interrupt)", rule, "❯ ", rule}, false, ""},
		{"nothing drawn yet", nil, false, ""},
	} {
		got := claudeHarness{}.screen(tc.lines)
		if !got.known || got.atPrompt != tc.atPrompt || got.dialog != tc.dialog {
			t.Errorf("%s: %+v, want at prompt %v, dialog %q", tc.name, got, tc.atPrompt, tc.dialog)
		}
	}
}

// A claude seat's launch adds to the user's settings and MCP servers
// (files of its own, named by flags), hooks every event it reports
// through to `cotal hook` with the seat's cotal binary, allows its cotal
// tools, and puts the persona's prompt in a 0600 file, never on argv.
func TestClaudeLaunchAddsSettingsOfItsOwn(t *testing.T) {
	dir := t.TempDir()
	p := &Persona{AgentFile: &config.AgentFile{Name: "cc", Prompt: "You review code; secret-ish persona text."}, Harness: "claude"}
	exe := "/opt/it's here/cotal"
	args, env, err := claudeHarness{}.launch(launchCtx{p: p, dir: dir, exe: exe})
	if err != nil {
		t.Fatal(err)
	}
	if len(env) != 0 {
		t.Errorf("the launch sets environment %q; the user's own stays", env)
	}
	for _, a := range args {
		if strings.Contains(a, "persona text") {
			t.Fatalf("the persona's prompt is on argv: %q", args)
		}
	}
	want := []string{"--settings", filepath.Join(dir, claudeSettingsFile), "--mcp-config", filepath.Join(dir, claudeMCPFile),
		"--append-system-prompt-file", filepath.Join(dir, claudePromptFile)}
	if !slices.Equal(args, want) {
		t.Fatalf("args %q, want %q", args, want)
	}
	fi, err := os.Stat(filepath.Join(dir, claudePromptFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the prompt file: %v %v", fi, err)
	}
	var s struct {
		Permissions struct{ Allow []string } `json:"permissions"`
		Hooks       map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type, Command string
				Timeout       int
			}
		} `json:"hooks"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, claudeSettingsFile))
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Permissions.Allow, []string{"mcp__cotal"}) {
		t.Errorf("allow %q", s.Permissions.Allow)
	}
	for _, e := range claudeHookEvents {
		h := s.Hooks[e.event]
		if len(h) != 1 || len(h[0].Hooks) != 1 || h[0].Matcher != e.matcher {
			t.Fatalf("hook %s: %+v", e.event, h)
		}
		c := h[0].Hooks[0]
		if c.Type != "command" || c.Command != `'/opt/it'\''s here/cotal' hook `+e.event || c.Timeout <= 0 {
			t.Errorf("hook %s runs %+v", e.event, c)
		}
	}
	if s.Hooks["PermissionRequest"][0].Hooks[0].Timeout < 3600 {
		t.Errorf("a permission prompt's hook gives its person %d s", s.Hooks["PermissionRequest"][0].Hooks[0].Timeout)
	}
}

func TestClaudeLabelsAndDecisions(t *testing.T) {
	for _, tc := range []struct{ name, input, want string }{
		{"Bash", `{"command":"touch run-bbb2","description":"x"}`, "Bash(touch run-bbb2)"},
		{"Edit", `{"file_path":"/src/a.go","old_string":"x"}`, "Edit(/src/a.go)"},
		{"Bash", `{"command":"echo a\n\n   b"}`, "Bash(echo a b)"},
		{"mcp__github__create_issue", `{"title":"t"}`, "mcp__github__create_issue"},
		{"Bash", `{"command":"` + strings.Repeat("x", 300) + `"}`, "Bash(" + strings.Repeat("x", maxLabel-6) + "…"},
	} {
		if got := toolLabel(tc.name, json.RawMessage(tc.input)); got != tc.want {
			t.Errorf("toolLabel(%s, %s) = %q, want %q", tc.name, tc.input, got, tc.want)
		}
	}
	var d struct {
		HookSpecificOutput struct {
			HookEventName string `json:"hookEventName"`
			Decision      map[string]string
		} `json:"hookSpecificOutput"`
	}
	_ = json.Unmarshal([]byte(claudeDecision(client.AnswerAllow, "ignored")), &d)
	if d.HookSpecificOutput.HookEventName != "PermissionRequest" || d.HookSpecificOutput.Decision["behavior"] != "allow" || d.HookSpecificOutput.Decision["message"] != "" {
		t.Errorf("allow: %+v", d)
	}
	_ = json.Unmarshal([]byte(claudeDecision(client.AnswerDeny, "")), &d)
	if d.HookSpecificOutput.Decision["behavior"] != "deny" || d.HookSpecificOutput.Decision["message"] == "" {
		t.Errorf("deny without a reason says none to the model: %+v", d)
	}
}
