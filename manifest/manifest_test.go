package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// project writes a folder with a cotal.yaml and the agent files given.
func project(t *testing.T, yaml string, agents map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if len(agents) > 0 {
		ad := filepath.Join(dir, ".cotal", "agents")
		if err := os.MkdirAll(ad, 0o755); err != nil {
			t.Fatal(err)
		}
		for n, body := range agents {
			if err := os.WriteFile(filepath.Join(ad, n+".md"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const header = "apiVersion: cotal/v1\nkind: Mesh\nspace: team\n"

const three = header + `defaults:
  deliveryClass: durable
agents:
  lead: lead
  coder:
    persona: .cotal/agents/lead.md
    model: sonnet
    count: 2
  bot:
    agent: command
    command: sh
    args: [-c, "echo hi"]
    role: Reviewer
    instructions: Review what you are sent.
    capabilities: [spawn, role:review]
channels:
  general:
    description: everyone
    subscribe: [lead, coder]
    allowPublish: [lead]
  review:
    replay: false
    replayWindow: 24h
    allowSubscribe: [bot]
    allowPublish: [bot, coder]
`

const leadFile = "---\nname: lead\nagent: command\ncommand: sh\nallowPublish: [\">\"]\n---\nYou lead.\n"

func TestParseGoodFileInvertsTheACL(t *testing.T) {
	path := project(t, three, map[string]string{"lead": leadFile})
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Space != "team" || m.Open || m.Defaults.DeliveryClass != "durable" {
		t.Fatalf("header: %+v", m)
	}
	want := map[string][3][]string{
		"lead":  {{"general"}, {"general"}, {"general"}},
		"coder": {{"general"}, {"general"}, {"review"}},
		"bot":   {{}, {"review"}, {"review"}},
	}
	for name, w := range want {
		a := m.Agent(name)
		if a == nil {
			t.Fatalf("no agent %s", name)
		}
		got := [3][]string{a.Subscribe, a.AllowSubscribe, a.AllowPublish}
		for i := range w {
			if !slices.Equal(got[i], w[i]) {
				t.Errorf("%s list %d: got %v, want %v", name, i, got[i], w[i])
			}
		}
	}
	lead, coder, bot := m.Agent("lead"), m.Agent("coder"), m.Agent("bot")
	if lead.Instructions != "You lead.\n" || lead.Harness != "command" || lead.Command != "sh" {
		t.Errorf("lead from its file: %+v", lead)
	}
	if coder.Model != "sonnet" || !slices.Equal(coder.Seats(), []string{"coder_1", "coder_2"}) {
		t.Errorf("coder overrides: model %q seats %v", coder.Model, coder.Seats())
	}
	if bot.Role != "reviewer" || bot.Persona != "" || !slices.Equal(bot.Args, []string{"-c", "echo hi"}) || !slices.Equal(bot.Capabilities, []string{"spawn", "role:review"}) {
		t.Errorf("bot inline: %+v", bot)
	}
	// The lead's file grants posting everywhere; the manifest's channels
	// alone decide unless personaPermissions says include.
	if len(m.Notes) != 2 || !strings.Contains(m.Notes[0], "not used") {
		t.Errorf("notes: %q", m.Notes)
	}
	r := m.Channels[1]
	if r.Name != "review" || r.Config.Replay == nil || *r.Config.Replay || r.Config.ReplayWindow != "24h" {
		t.Errorf("review channel: %+v", r)
	}
	af := bot.Resolve().AgentFile()
	if af.Prompt != "Review what you are sent." || af.Launch.Command != "sh" || !slices.Equal(af.AllowPublish, []string{"review"}) {
		t.Errorf("persona of bot: %+v", af)
	}
}

func TestPersonaPermissionsInclude(t *testing.T) {
	y := header + "personaPermissions: include\nagents:\n  lead: lead\nchannels:\n  general:\n    subscribe: [lead]\n"
	m, err := Load(project(t, y, map[string]string{"lead": leadFile}))
	if err != nil {
		t.Fatal(err)
	}
	if a := m.Agent("lead"); !slices.Equal(a.AllowPublish, []string{">"}) || !slices.Equal(a.Subscribe, []string{"general"}) {
		t.Fatalf("include: %+v", a)
	}
}

// broker.servers names the cluster the mesh lives on, as up --url does.
func TestBrokerServers(t *testing.T) {
	y := header + "broker:\n  auth: false\n  servers: [nats://a:4222, tls://b:4222]\nchannels: {}\n"
	m, err := Load(project(t, y, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !m.Open || !slices.Equal(m.Servers, []string{"nats://a:4222", "tls://b:4222"}) {
		t.Fatalf("open %v servers %q", m.Open, m.Servers)
	}
}

// Every refusal names the line and column of what is wrong.
func TestBadFilesAreRefusedWithLineAndColumn(t *testing.T) {
	agents := map[string]string{"lead": leadFile, "broken": "---\nname: other\n---\n"}
	cases := []struct {
		name, yaml, where, says string
	}{
		{"unknown top key", header + "chanels: {}\n", ":4:1:", `unknown key "chanels" in the manifest: did you mean channels?`},
		{"unknown channel key", header + "channels:\n  general:\n    allowPost: []\n", ":6:5:", `unknown key "allowPost"`},
		{"unknown agent key", header + "agents:\n  a:\n    agent: command\n    command: sh\n    moddel: x\nchannels: {}\n", ":8:5:", "did you mean model?"},
		{"duplicate top key", header + "space: other\nchannels: {}\n", ":4:1:", `"space" already defined at [3:1]`},
		{"duplicate channel", header + "channels:\n  general: {}\n  general: {}\n", ":6:3:", `"general" already defined`},
		{"duplicate agent", header + "agents:\n  lead: lead\n  lead: lead\nchannels: {}\n", ":6:3:", `"lead" already defined`},
		{"wildcard channel", header + "channels:\n  team.*: {}\n", ":5:3:", "is a pattern"},
		{"wildcard tail", header + "channels:\n  team.>: {}\n", ":5:3:", "is a pattern"},
		{"bad channel name", header + "channels:\n  team/a: {}\n", ":5:3:", `channel "team/a"`},
		{"undeclared agent in list", header + "agents:\n  lead: lead\nchannels:\n  general:\n    allowPublish: [lead, ghost]\n", ":8:26:", `"ghost" is not an agent of this manifest`},
		{"persona resolves to nothing", header + "agents:\n  lead: nobody\nchannels: {}\n", ":5:9:", "resolves to no agent file"},
		{"persona path to nothing", header + "agents:\n  lead:\n    persona: ./x/lead.md\nchannels: {}\n", ":6:14:", "resolves to no agent file"},
		{"persona file refused", header + "agents:\n  b: broken\nchannels: {}\n", ":5:6:", "does not match the file name"},
		{"cwd to nothing", header + "agents:\n  a:\n    agent: command\n    command: sh\n    cwd: nowhere\nchannels: {}\n", ":8:10:", "is not a folder"},
		{"replay not a bool", header + "channels:\n  g:\n    replay: yes please\n", ":6:13:", "replay must be true or false, not a string"},
		{"count not a number", header + "agents:\n  a:\n    agent: command\n    command: sh\n    count: two\nchannels: {}\n", ":8:12:", "count must be a whole number"},
		{"count too big", header + "agents:\n  a:\n    agent: command\n    command: sh\n    count: 99\nchannels: {}\n", ":8:12:", "1 to 32 seats"},
		{"list not a list", header + "agents:\n  lead: lead\nchannels:\n  g:\n    subscribe: lead\n", ":8:16:", "must be a list"},
		{"model a number", header + "agents:\n  a:\n    agent: command\n    command: sh\n    model: 4\nchannels: {}\n", ":8:12:", "model must be a string, not a number"},
		{"channels a list", header + "channels: [a]\n", ":4:11:", "channels must be a map"},
		{"bad window", header + "channels:\n  g:\n    replayWindow: 3 weeks\n", ":6:19:", "replay window"},
		{"bad class", header + "channels:\n  g:\n    deliveryClass: sometimes\n", ":6:20:", "use live or durable"},
		{"description too long", header + "channels:\n  g:\n    description: " + strings.Repeat("x", 201) + "\n", ":6:18:", "200"},
		{"wrong apiVersion", "apiVersion: cotal/v2\nkind: Mesh\nspace: s\nchannels: {}\n", ":1:13:", "is not cotal/v1"},
		{"no channels", header, ":1:1:", "channels is required"},
		{"bad space", "apiVersion: cotal/v1\nkind: Mesh\nspace: a.b\nchannels: {}\n", ":3:8:", "space:"},
		{"admin capability", header + "agents:\n  a:\n    agent: command\n    command: sh\n    capabilities: [admin]\nchannels: {}\n", ":8:20:", "never grantable"},
		{"reserved name", header + "agents:\n  cotal_x:\n    agent: command\n    command: sh\nchannels: {}\n", ":5:3:", "belong to the mesh's own services"},
		{"agent name not a token", header + "agents:\n  a-b:\n    agent: command\n    command: sh\nchannels: {}\n", ":5:3:", "one token"},
		{"command without command", header + "agents:\n  a:\n    agent: command\nchannels: {}\n", ":5:3:", "needs a command"},
		{"seat names collide", header + "agents:\n  a:\n    agent: command\n    command: sh\n    count: 2\n  a_1:\n    agent: command\n    command: sh\nchannels: {}\n", ":9:3:", "which agent a takes too"},
		{"unsupported host", header + "broker:\n  host: 0.0.0.0\nchannels: {}\n", ":5:3:", "broker.host is not supported"},
		{"server not a url", header + "broker:\n  servers: [x:4222]\nchannels: {}\n", ":5:13:", "use nats://host:port"},
		{"server with password", header + "broker:\n  servers: [\"nats://u:p@x:4222\"]\nchannels: {}\n", ":5:13:", "no user or password"},
		{"auth user", header + "broker:\n  auth: user\nchannels: {}\n", ":5:9:", `"user" is not supported`},
		{"second document", header + "channels: {}\n---\nspace: x\n", ":6:", "second"},
		{"bad yaml", header + "channels:\n  g: [a\n", ":", ""},
		{"merge key", header + "channels:\n  g:\n    <<: {replay: true}\n", ":6:5:", "merge keys"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := project(t, c.yaml, agents)
			_, err := Load(path)
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("want a *manifest.Error, got %v", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+c.where) || !strings.Contains(msg, c.says) {
				t.Fatalf("got  %s\nwant %s%s ... %s", msg, path, c.where, c.says)
			}
		})
	}
}

func TestFindWalksUp(t *testing.T) {
	path := project(t, three, map[string]string{"lead": leadFile})
	deep := filepath.Join(filepath.Dir(path), "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, ok := Find(deep); !ok || got != path {
		t.Fatalf("Find(%s) = %s, %v", deep, got, ok)
	}
	if _, ok := Find(t.TempDir()); ok {
		t.Fatal("found a manifest in an empty folder")
	}
}

// What `cotal init` writes is a file this reader takes as it is.
func TestStarterLoads(t *testing.T) {
	path := project(t, Starter(SpaceFor("my project")), map[string]string{StarterPersona: StarterPersonaFile})
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Space != "my_project" || len(m.Agents) != 1 || !slices.Equal(m.Agents[0].AllowPublish, []string{"general"}) || m.Agents[0].Harness != "claude" {
		t.Fatalf("starter: space %q agents %+v", m.Space, m.Agents)
	}
}

// TestManifestAliasesAreFollowed: a channel list written once with an
// anchor and named again by an alias gives both channels the same agents.
func TestManifestAliasesAreFollowed(t *testing.T) {
	y := header + "agents:\n  a: {agent: command, command: sh}\n  b: {agent: command, command: sh}\nchannels:\n  one:\n    subscribe: &both [a, b]\n    allowPublish: *both\n"
	m, err := Load(project(t, y, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if got := m.Agent(n).AllowPublish; !slices.Equal(got, []string{"one"}) {
			t.Fatalf("%s may post on %q, want [one] through the alias", n, got)
		}
	}
}
