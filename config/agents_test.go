package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

func TestLoadAgentFile(t *testing.T) {
	tests := []struct {
		name      string
		file      string // under testdata/agents, without .md
		want      func(*testing.T, *config.AgentFile)
		wantLine  int    // the line a refusal must name
		wantError string // a part of the refusal
	}{
		{
			name: "full valid file",
			file: "full",
			want: func(t *testing.T, a *config.AgentFile) {
				want := &config.AgentFile{
					Path: a.Path, Name: "full", Role: "reviewer", Kind: config.KindEndpoint,
					Description:    "Reviews backend changes before they merge.",
					Tags:           []string{"review", "backend"},
					Subscribe:      []string{"team.backend", "alerts"},
					AllowSubscribe: []string{"team.>", "alerts"},
					AllowPublish:   []string{"team.backend", "team.reviews"},
					Quiet:          []string{"alerts"},
					Muted:          []string{"team.noise"},
					Model:          "claude-opus", Variant: "high", Agent: "claude",
					LaunchOptions: map[string]any{"flags": []any{"--verbose"}, "env": map[string]any{"DEBUG": "1"}},
					Capabilities:  []string{"spawn", "run", "role:builder"},
					Owner:         "u_abc",
					Meta:          map[string]any{"connector": "claude", "x-team": map[string]any{"lead": "ana"}},
					Prompt:        "You review code.\n\nBe kind.\n",
				}
				if got := exported(*a); !reflect.DeepEqual(got, exported(*want)) {
					t.Errorf("got  %#v\nwant %#v", got, exported(*want))
				}
				if l, ok := a.Line("allowPublish"); !ok || l != 11 {
					t.Errorf("Line(allowPublish) = %d, %v; want 11, true", l, ok)
				}
			},
		},
		{
			name: "omitted allowSubscribe is subscribe",
			file: "omitted_allow",
			want: func(t *testing.T, a *config.AgentFile) {
				want := []string{"team.backend", "team.ops"}
				if !reflect.DeepEqual([]string(a.AllowSubscribe), want) {
					t.Errorf("AllowSubscribe = %q, want %q", a.AllowSubscribe, want)
				}
				if _, ok := a.Line("allowSubscribe"); ok {
					t.Error("Line says the omitted allowSubscribe was written")
				}
				if a.AllowPublish == nil || len(a.AllowPublish) != 0 {
					t.Errorf("omitted allowPublish = %#v, want an empty (deny) list", a.AllowPublish)
				}
			},
		},
		{
			name: "everything omitted takes the defaults",
			file: "omitted_all",
			want: func(t *testing.T, a *config.AgentFile) {
				if a.Kind != config.KindAgent || a.Role != "" || a.Meta != nil || a.Prompt != "" {
					t.Errorf("kind %q role %q meta %v prompt %q; want agent, none, none, empty", a.Kind, a.Role, a.Meta, a.Prompt)
				}
				for name, l := range map[string][]string{"subscribe": a.Subscribe, "allowSubscribe": a.AllowSubscribe, "allowPublish": a.AllowPublish} {
					if l == nil || len(l) != 0 {
						t.Errorf("%s = %#v, want an empty list", name, l)
					}
				}
			},
		},
		{
			name:      "explicit empty allowSubscribe with subscribe",
			file:      "empty_allow",
			wantLine:  5,
			wantError: "allowSubscribe is empty but subscribe lists team.backend",
		},
		{
			name:      "null allowSubscribe is written, so empty",
			file:      "null_allow",
			wantLine:  4,
			wantError: "allowSubscribe is empty",
		},
		{
			name:      "foo/bar in allowPublish",
			file:      "bad_publish",
			wantLine:  6,
			wantError: `allowPublish: invalid channel "foo/bar"`,
		},
		{
			name:      "trailing dot in subscribe",
			file:      "bad_subscribe",
			wantLine:  3,
			wantError: `subscribe: invalid channel "team.a."`,
		},
		{
			name: "unknown keys kept in meta",
			file: "meta",
			want: func(t *testing.T, a *config.AgentFile) {
				lim := map[string]any{"tokens": uint64(5000)}
				want := map[string]any{"connector": "claude", "host": "box1", "x-limits": lim, "x-copy": lim}
				if !reflect.DeepEqual(a.Meta, want) {
					t.Errorf("Meta = %#v, want %#v", a.Meta, want)
				}
			},
		},
		{
			name:      "admin capability",
			file:      "admin",
			wantLine:  5,
			wantError: "never grantable",
		},
		{
			name:      "unknown capability",
			file:      "bad_capability",
			wantLine:  3,
			wantError: `unknown capability "fly"`,
		},
		{
			name:      "quiet outside allowSubscribe",
			file:      "quiet_outside",
			wantLine:  5,
			wantError: `quiet: "team.frontend" is not within allowSubscribe`,
		},
		{
			name:      "quiet must be concrete",
			file:      "quiet_pattern",
			wantLine:  4,
			wantError: `quiet: "team.*" is a pattern`,
		},
		{
			name:      "quiet and muted overlap",
			file:      "quiet_muted",
			wantLine:  7,
			wantError: `"team.b" is both quiet and muted`,
		},
		{
			name:      "subscribe outside allowSubscribe",
			file:      "subscribe_outside",
			wantLine:  3,
			wantError: `subscribe: "ops" is not within allowSubscribe`,
		},
		{
			name:      "name differs from the file name",
			file:      "mismatch",
			wantLine:  2,
			wantError: `name "someone_else" does not match the file name "mismatch"`,
		},
		{
			name:      "name missing",
			file:      "no_name",
			wantLine:  1,
			wantError: "name is required",
		},
		{
			name:      "missing closing fence",
			file:      "unclosed",
			wantLine:  1,
			wantError: "never closed by a --- line",
		},
		{
			name:      "no opening fence",
			file:      "no_fence",
			wantLine:  1,
			wantError: "must start with a --- line",
		},
		{
			name:      "unknown kind",
			file:      "bad_kind",
			wantLine:  3,
			wantError: `kind "robot" is not agent or endpoint`,
		},
		{
			name:      "role not a token",
			file:      "bad_role",
			wantLine:  3,
			wantError: `role "code-reviewer"`,
		},
		{
			name:      "YAML syntax error",
			file:      "bad_yaml",
			wantLine:  3,
			wantError: "']'",
		},
		{
			name:      "scalar where a list belongs",
			file:      "not_a_list",
			wantLine:  3,
			wantError: "subscribe must be a list",
		},
		{
			name: "body preserved exactly",
			file: "body",
			want: func(t *testing.T, a *config.AgentFile) {
				want := "\n# Heading\n\n---\n\ntrailing spaces   \n\n\n"
				if a.Prompt != want {
					t.Errorf("Prompt = %q, want %q", a.Prompt, want)
				}
			},
		},
		{
			name: "closing fence at end of file",
			file: "no_body",
			want: func(t *testing.T, a *config.AgentFile) {
				if a.Prompt != "" || a.Name != "no_body" {
					t.Errorf("name %q prompt %q, want no_body and empty", a.Name, a.Prompt)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("testdata", "agents", tc.file+".md")
			a, err := config.LoadAgentFile(path)
			if tc.wantError != "" {
				if err == nil {
					t.Fatalf("accepted; want a refusal at line %d containing %q", tc.wantLine, tc.wantError)
				}
				t.Log(err)
				var fe *config.AgentFileError
				if !errors.As(err, &fe) || fe.Path != path || fe.Line != tc.wantLine {
					t.Errorf("error %q: want an *AgentFileError for %s line %d", err, path, tc.wantLine)
				}
				prefix := path + ":" + strconv.Itoa(tc.wantLine) + ": "
				if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tc.wantError) {
					t.Errorf("error %q: want it to start %q and contain %q", err, prefix, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want(t, a)
		})
	}
}

func TestAgentFileErrorWrapsChannelRefusal(t *testing.T) {
	_, err := config.LoadAgentFile(filepath.Join("testdata", "agents", "bad_publish.md"))
	if !errors.Is(err, wire.ErrInvalidChannel) {
		t.Errorf("error %v does not wrap wire.ErrInvalidChannel", err)
	}
}

func TestFindAgentFile(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	proj := t.TempDir()
	deep := filepath.Join(proj, "src", "pkg")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(config.AgentsDir(proj), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(config.AgentsDir(proj), "ana.md")
	if err := os.WriteFile(file, []byte("---\nname: ana\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(config.AgentsDir(proj), "dir.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cwd, agent string
		want             string
	}{
		{"from a subfolder", deep, "ana", file},
		{"from the project", proj, "ana", file},
		{"no such agent", deep, "bob", ""},
		{"a folder is not a file", deep, "dir", ""},
		{"no path escapes", deep, "../agents/ana", ""},
		{"outside any project", t.TempDir(), "ana", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := config.FindAgentFile(tc.cwd, tc.agent)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("FindAgentFile(%s, %s) = %q, %v; want %q", tc.cwd, tc.agent, got, ok, tc.want)
			}
		})
	}
}

// exported copies an AgentFile without its unexported line table.
func exported(a config.AgentFile) []any {
	return []any{a.Path, a.Name, a.Role, a.Kind, a.Description, a.Tags, a.Subscribe, a.AllowSubscribe,
		a.AllowPublish, a.Quiet, a.Muted, a.Model, a.Variant, a.Agent, a.LaunchOptions, a.Capabilities,
		a.Owner, a.Meta, a.Prompt}
}

// TestAgentFileKeyTypoIsRefused: a key one typo away from one that means
// something is refused naming the key meant and its line, never kept as
// metadata; a key near nothing is kept.
func TestAgentFileKeyTypoIsRefused(t *testing.T) {
	for _, tc := range []struct {
		key, want string
	}{
		{"allowPublsh", "did you mean allowPublish?"},
		{"Subscribe", "did you mean subscribe?"},
		{"alowSubscribe", "did you mean allowSubscribe?"},
		{"rloe", "did you mean role?"},
		{"capabilites", "did you mean capabilities?"},
		{"commnd", "did you mean command?"},
		{"team_lead", ""},
		{"priority", ""},
	} {
		t.Run(tc.key, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "typo.md")
			body := "---\nname: typo\nsubscribe: [team]\n" + tc.key + ": [team]\n---\nprompt\n"
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			a, err := config.LoadAgentFile(path)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("a key near nothing was refused: %v", err)
				}
				if _, ok := a.Meta[tc.key]; !ok {
					t.Fatalf("%s was not kept as metadata: %+v", tc.key, a.Meta)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path+":4") {
				t.Fatalf("%s: got %v, want %q at %s:4", tc.key, err, tc.want, path)
			}
		})
	}
}

// TestAgentFileLaunchKeysAreTyped: the keys a seat's launch reads are
// checked for their type where they are written. `inject: yes`, `ready:
// ouput` and `args: "-c ..."` as a string ran silently without effect.
func TestAgentFileLaunchKeysAreTyped(t *testing.T) {
	for _, tc := range []struct {
		name, lines, want string
	}{
		{"inject yes", "inject: yes", `inject must be true or false, not "yes"`},
		{"inject 1", "inject: 1", `inject must be true or false, not "1"`},
		{"inject list", "inject: [true]", "inject must be true or false, not a list"},
		{"ready typo", "ready: ouput", `ready "ouput" is not mcp or output`},
		{"args string", `args: "-c echo hi"`, "args must be a list such as [a, b], not a scalar"},
		{"command list", "command: [sh]", "command must be a string, not a list"},
		{"env list", "env: [A=1]", "env must be a map of NAME: value lines, not a list"},
		{"env nested", "env:\n  A: [1]", "env A must be a string, not a list"},
		{"cwd map", "cwd: {a: b}", "cwd must be a string, not a map"},
		{"readiness number", "readiness: 90", `readiness "90" is not a duration like 90s or 3m`},
		{"readiness short", "readiness: 10ms", "readiness 10ms is outside 1s to 1h0m0s"},
		{"readiness long", "readiness: 2h", "readiness 2h0m0s is outside 1s to 1h0m0s"},
		{"readiness list", "readiness: [3m]", "readiness must be a string, not a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "seat.md")
			body := "---\nname: seat\nagent: command\n" + tc.lines + "\n---\n"
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := config.LoadAgentFile(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%q: got %v, want %q", tc.lines, err, tc.want)
			}
			var fe *config.AgentFileError
			if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), path+":") || fe.Line < 4 {
				t.Fatalf("%q: %v does not name %s and the line", tc.lines, err, path)
			}
		})
	}

	path := filepath.Join(t.TempDir(), "seat.md")
	body := "---\nname: seat\nagent: command\ncommand: sh\nargs: [\"-c\", \"echo $A\", 3]\nenv:\n  B: two\n  A: 1\ncwd: /tmp\ninject: true\nready: mcp\nreadiness: 2m30s\n---\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := config.LoadAgentFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := a.Launch
	if l.Command != "sh" || !reflect.DeepEqual(l.Args, []string{"-c", "echo $A", "3"}) || !reflect.DeepEqual(l.Env, []string{"A=1", "B=two"}) ||
		l.Cwd != "/tmp" || l.Inject == nil || !*l.Inject || l.Ready != config.ReadyMCP || l.Readiness != 150*time.Second {
		t.Fatalf("launch %+v", l)
	}
	if len(a.Meta) != 0 {
		t.Fatalf("launch keys kept as metadata too: %v", a.Meta)
	}
}

// TestEveryPersonaKeyIsDocumented: the README's table lists every key an
// agent file gives a meaning to, with its type.
func TestEveryPersonaKeyIsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range config.PersonaKeys {
		row := "| `" + k.Key + "` | " + k.Type + " | " + k.Meaning + " |"
		if !strings.Contains(string(b), row) {
			t.Errorf("README.md has no row %s", row)
		}
	}
}

// TestAgentFileAliasesAreFollowed: an alias stands for the value its
// anchor names, in a key's value and inside a list.
func TestAgentFileAliasesAreFollowed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seat.md")
	body := "---\nname: seat\nagent: command\ncommand: &sh sh\nargs: [-c, *sh]\nrole: &r reviewer\ndescription: *r\n---\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := config.LoadAgentFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if a.Launch.Command != "sh" || len(a.Launch.Args) != 2 || a.Launch.Args[1] != "sh" || a.Role != "reviewer" || a.Description != "reviewer" {
		t.Fatalf("aliases not followed: command %q args %q role %q description %q", a.Launch.Command, a.Launch.Args, a.Role, a.Description)
	}
}
