package seat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpencodeConfigKeepsTheUsers: an opencode seat's config comes inline
// (OPENCODE_CONFIG_CONTENT, which opencode merges over the user's files),
// and an inline config of the user's own is kept with cotal's keys added:
// their rules and plugins stay, cotal's MCP server, allow rule, plugin and
// prompt file join them. An inline config that is not a JSON object is
// refused with what to do, not dropped.
func TestOpencodeConfigKeepsTheUsers(t *testing.T) {
	dir := t.TempDir()
	l := launchCtx{p: &Persona{Harness: "opencode"}, dir: dir, exe: "/opt/cotal/cotal", environ: []string{
		"HOME=/home/u",
		`OPENCODE_CONFIG_CONTENT={"permission":{"bash":"ask"},"plugin":["theirs-plugin"],"mcp":{"theirs":{"type":"local","command":["t"]}}}`,
	}}
	args, env, err := opencodeHarness{prompt: "be brief"}.launch(l)
	if err != nil || len(args) != 0 || len(env) != 1 {
		t.Fatalf("launch: %q %q %v", args, env, err)
	}
	content, ok := strings.CutPrefix(env[0], "OPENCODE_CONFIG_CONTENT=")
	if !ok {
		t.Fatalf("env %q", env)
	}
	var cfg struct {
		Permission   map[string]string         `json:"permission"`
		Plugin       []string                  `json:"plugin"`
		MCP          map[string]map[string]any `json:"mcp"`
		Instructions []string                  `json:"instructions"`
	}
	if err := json.Unmarshal([]byte(content), &cfg); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(dir, opencodePluginFile)
	if cfg.Permission["bash"] != "ask" || cfg.Permission[opencodeAllow] != "allow" {
		t.Errorf("permission %v", cfg.Permission)
	}
	if len(cfg.Plugin) != 2 || cfg.Plugin[0] != "theirs-plugin" || cfg.Plugin[1] != "file://"+plugin {
		t.Errorf("plugin %v", cfg.Plugin)
	}
	if cfg.MCP["theirs"] == nil || cfg.MCP["cotal"] == nil {
		t.Errorf("mcp %v", cfg.MCP)
	}
	for _, path := range append([]string{plugin}, cfg.Instructions...) {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", path, fi, err)
		}
	}
	if b, _ := os.ReadFile(plugin); !strings.Contains(string(b), `const cotal = "/opt/cotal/cotal"`) {
		t.Errorf("the plugin does not run the seat's cotal:\n%s", b)
	}
	if len(cfg.Instructions) != 1 {
		t.Fatalf("instructions %v", cfg.Instructions)
	}
	if b, _ := os.ReadFile(cfg.Instructions[0]); string(b) != "be brief" {
		t.Errorf("prompt file %q", b)
	}

	l.environ = []string{`OPENCODE_CONFIG_CONTENT=permission: ask`}
	if _, _, err := (opencodeHarness{}).launch(l); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("a broken inline config: %v", err)
	}
}

// opencode's screens as tmux draws them (testdata/screens): its prompt at
// its start and after a turn (its hint gone), a turn under way, a
// permission request.
func TestOpencodeScreenRule(t *testing.T) {
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
		{"prompt at its start", read("opencode-prompt.txt"), true, ""},
		{"prompt after a turn", read("opencode-idle.txt"), true, ""},
		{"a turn under way", read("opencode-turn.txt"), false, ""},
		{"permission", read("opencode-ask.txt"), false, "Permission required"},
		{"nothing drawn yet", nil, false, ""},
	} {
		got := opencodeHarness{}.screen(tc.lines)
		if got.atPrompt != tc.atPrompt || got.dialog != tc.dialog || !got.known {
			t.Errorf("%s: %+v, want atPrompt %v dialog %q", tc.name, got, tc.atPrompt, tc.dialog)
		}
	}
}

// TestOpencodeAskReadsAsAQuestion: opencode's permission kinds are named
// for a person ("approve External_directory(/x/*)" read as a typo).
func TestOpencodeAskReadsAsAQuestion(t *testing.T) {
	for _, c := range []struct {
		kind     string
		patterns []string
		want     string
	}{
		{"bash", []string{"touch run-oc"}, "approve Bash(touch run-oc)"},
		{"external_directory", []string{"/x/*"}, "approve Outside its directory(/x/*)"},
		{"edit", []string{"a.go", "b.go"}, "approve Edit(a.go b.go)"},
		{"some_new_kind", nil, "approve Some new kind()"},
		{"bash", []string{"ls [a-z]*"}, "approve Bash(ls [a-z]*)"},
		{"bash", []string{"rm -rf /\x1b[2J"}, `approve Bash(rm -rf /\x1b[2J)`},
	} {
		if got := opencodeAsk(c.kind, c.patterns); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.kind, c.patterns, got, c.want)
		}
	}
}
