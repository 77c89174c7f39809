package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cotal-go/cotal/clirender"
	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/config"
)

// noJSON are the commands that print no result a script would read, each
// with why; every other runnable command has --json.
var noJSON = map[string]string{
	"cotal":                       "the dashboard",
	"cotal join":                  "a session at a terminal",
	"cotal attach":                "a session at a terminal",
	"cotal mcp":                   "a stdio server",
	"cotal supervise":             "runs until stopped",
	"cotal hook":                  "prints what its harness reads, in the harness's own format",
	"cotal help":                  "help text",
	"cotal completion":            "prints a shell script",
	"cotal send":                  "a group",
	"cotal channels":              "a group",
	"cotal worktree":              "a group",
	"cotal broker":                "a group",
	"cotal completion bash":       "prints a shell script",
	"cotal completion zsh":        "prints a shell script",
	"cotal completion fish":       "prints a shell script",
	"cotal completion powershell": "prints a shell script",
}

// TestEveryResultCommandHasJSON: version, use, setup, set-status, leave,
// deregister-instance, history clear and mcp config printed their result
// only as text.
func TestEveryResultCommandHasJSON(t *testing.T) {
	c := newCLI(t, "json")
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		path := cmd.CommandPath()
		if _, ok := noJSON[path]; !ok && cmd.Runnable() && !strings.HasPrefix(cmd.Name(), "__") {
			if cmd.Flags().Lookup("json") == nil && cmd.InheritedFlags().Lookup("json") == nil {
				t.Errorf("%s has no --json", path)
			}
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(c.globals()))
}

func TestVersionUseAndSetupPrintJSON(t *testing.T) {
	c := newCLI(t, "json")
	out, errOut, code := c.run("version", "--json")
	var v clirun.VersionInfo
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 || v.Version != version || v.Go != runtime.Version() || !strings.HasPrefix(v.NATSServer, "v2.") && v.NATSServer != "unknown" {
		t.Errorf("version --json: exit %d, %v, %+v\n%s%s", code, err, v, out, errOut)
	}
	out, errOut, code = c.run("use", "--json")
	var u clirender.UseJSON
	if err := json.Unmarshal([]byte(out), &u); err != nil || code != 0 || u.Space != "json" || u.Default != "" {
		t.Errorf("use --json: exit %d, %v, %+v\n%s%s", code, err, u, out, errOut)
	}
	dir := t.TempDir()
	out, errOut, code = c.run("setup", "--dir", dir, "--json")
	var s clirender.SetupJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil || code != 0 || !s.Created || s.Persona != filepath.Join(dir, ".cotal", "agents", "default.md") || strings.Join(s.Personas, ",") != "default" {
		t.Errorf("setup --json: exit %d, %v, %+v\n%s%s", code, err, s, out, errOut)
	}
	if _, err := os.Stat(s.Persona); err != nil {
		t.Error(err)
	}
	out, _, _ = c.run("setup", "--dir", dir, "--json")
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.Created {
		t.Errorf("second setup --json: %v, %+v", err, s)
	}
}

// TestSetupListsEveryPersonaKey: the persona `cotal setup` seeds names
// every key an agent file may set, in comments, and still loads as the
// persona it was.
func TestSetupListsEveryPersonaKey(t *testing.T) {
	c := newCLI(t, "setupkeys")
	dir := t.TempDir()
	if out, errOut, code := c.run("setup", "--dir", dir); code != 0 {
		t.Fatalf("setup: exit %d\n%s%s", code, out, errOut)
	}
	path := filepath.Join(dir, ".cotal", "agents", "default.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range config.PersonaKeys {
		if !strings.Contains(string(b), "#   "+k.Key+" ") || !strings.Contains(string(b), k.Meaning) {
			t.Errorf("the seeded persona does not list %s:\n%s", k.Key, b)
		}
	}
	a, err := config.LoadAgentFile(path)
	if err != nil || a.Name != "default" || a.Agent != "claude" || len(a.Meta) != 0 {
		t.Fatalf("the seeded persona: %v %+v", err, a)
	}
}
