package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClient is an MCP client session on a `cotal mcp` process spoken to
// over its real stdin and stdout.
type mcpClient struct {
	t      *testing.T
	cs     *sdk.ClientSession
	cmd    *exec.Cmd
	stderr *lockedBuffer
}

// startMCP starts the cotal binary with argv and env, and initializes an
// MCP session with it over stdio; the session closes with the test.
func startMCP(t *testing.T, env []string, argv ...string) *mcpClient {
	t.Helper()
	c := &mcpClient{t: t, stderr: &lockedBuffer{}}
	c.cmd = exec.Command(argv[0], argv[1:]...)
	c.cmd.Env = env
	c.cmd.Dir = fakeHome
	c.cmd.Stderr = c.stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &sdk.CommandTransport{Command: c.cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("initializing %v: %v\nstderr: %s", argv, err, c.stderr)
	}
	c.cs = cs
	t.Cleanup(func() { c.close() })
	return c
}

// close ends the session: stdin closes, and the server must exit by itself.
func (c *mcpClient) close() int {
	if c.cs == nil {
		return c.cmd.ProcessState.ExitCode()
	}
	_ = c.cs.Close()
	c.cs = nil
	if c.cmd.ProcessState == nil {
		_ = c.cmd.Wait()
	}
	return c.cmd.ProcessState.ExitCode()
}

func (c *mcpClient) call(name string, args map[string]any) (string, bool) {
	c.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: protocol error: %v\nstderr: %s", name, err, c.stderr)
	}
	var parts []string
	for _, ct := range res.Content {
		if tc, ok := ct.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}

func (c *mcpClient) ok(name string, args map[string]any) string {
	c.t.Helper()
	text, isErr := c.call(name, args)
	if isErr {
		c.t.Fatalf("%s %v failed: %s\nstderr: %s", name, args, text, c.stderr)
	}
	return text
}

// waitOK polls a tool until it succeeds with want in its text.
func (c *mcpClient) waitOK(name string, args map[string]any, want string) string {
	c.t.Helper()
	var text string
	waitFor(c.t, 20*time.Second, func() error {
		var isErr bool
		if text, isErr = c.call(name, args); isErr || !strings.Contains(text, want) {
			return fmt.Errorf("%s: no %q in:\n%s", name, want, text)
		}
		return nil
	})
	return text
}

// The built binary serves the tools over real stdio, as a minted agent on
// a detached mesh: the initialize handshake, every tool listed with a
// closed schema, each tool called with its effect seen by the CLI, unknown
// arguments refused, offline when the client leaves, and a clear refusal
// once the mesh is down.
func TestMCPServerOverStdio(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	alice := mint(t, home, "alice", "--subscribe", "team", "--allow-publish", "team", "--role", "dev")
	bob := mint(t, home, "bob", "--subscribe", "team", "--allow-publish", "team", "--role", "reviewer")
	env := cotalEnv(home)

	c := startMCP(t, env, cotalBin, "mcp", "--creds", alice.Creds)
	if info := c.cs.InitializeResult().ServerInfo; info.Name != "cotal" {
		t.Errorf("server info: %+v", info)
	}
	list, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if s, ok := tl.InputSchema.(map[string]any); !ok || s["additionalProperties"] != false {
			t.Errorf("%s: input schema is not closed: %v", tl.Name, tl.InputSchema)
		}
	}
	sort.Strings(names)
	want := []string{"cotal_anycast", "cotal_channel_info", "cotal_channel_mode", "cotal_channels", "cotal_connection_status",
		"cotal_despawn", "cotal_dm", "cotal_docs", "cotal_inbox", "cotal_join", "cotal_leave", "cotal_orientation",
		"cotal_personas", "cotal_roster", "cotal_send", "cotal_spawn", "cotal_status"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("tools/list: %v", names)
	}

	c.waitOK("cotal_orientation", nil, "You are alice (id local.alice, role dev)")
	if got, isErr := c.call("cotal_dm", map[string]any{"to": "bob", "text": "x", "owner": "local"}); !isErr || got != "cotal_dm: unknown argument(s): owner — this tool accepts only: to, text" {
		t.Errorf("unknown argument: %v %q", isErr, got)
	}
	if got, isErr := c.call("cotal_roster", map[string]any{"actor": "bob"}); !isErr || got != "cotal_roster takes no arguments (got actor)" {
		t.Errorf("argument to a tool that takes none: %v %q", isErr, got)
	}

	// What alice sends through the tools reaches bob, from alice.
	c.ok("cotal_dm", map[string]any{"to": "bob", "text": "dm-from-mcp"})
	c.ok("cotal_anycast", map[string]any{"role": "reviewer", "text": "task-from-mcp"})
	items := parseInbox(t, mustCotal(t, home, "--creds", bob.Creds, "inbox", "--json"))
	var got []string
	for _, it := range items {
		got = append(got, it.Kind+" "+it.Message.From.ID+" "+it.text())
	}
	if fmt.Sprint(got) != "[dm local.alice dm-from-mcp anycast local.alice task-from-mcp]" {
		t.Errorf("bob's inbox: %v", got)
	}
	c.ok("cotal_send", map[string]any{"text": "post-from-mcp"})
	if out := mustCotal(t, home, "history", "team"); !strings.Contains(out, "post-from-mcp") {
		t.Errorf("#team's history has no post from the tool:\n%s", out)
	}

	// What bob sends alice comes out of cotal_inbox once; a peek keeps it.
	mustCotal(t, home, "--creds", bob.Creds, "send", "dm", "alice", "dm-to-mcp")
	c.waitOK("cotal_inbox", map[string]any{"peek": true}, "[DM from bob/reviewer] dm-to-mcp")
	if got := c.ok("cotal_inbox", nil); !strings.Contains(got, "[DM from bob/reviewer] dm-to-mcp") {
		t.Errorf("inbox after the peek: %q", got)
	}
	if got := c.ok("cotal_inbox", nil); got != "Inbox empty, no new messages." {
		t.Errorf("second inbox: %q", got)
	}

	c.ok("cotal_status", map[string]any{"status": "working", "activity": "e2e"})
	waitFor(t, 10*time.Second, func() error {
		if st, err := rosterStatus(t, home, "alice"); err != nil || st != "working" {
			return fmt.Errorf("alice on the roster: %q %v", st, err)
		}
		return nil
	})
	for _, call := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"cotal_roster", nil, "alice/dev (you) — working for"},
		{"cotal_connection_status", nil, `"state": "ready"`},
		{"cotal_channel_info", map[string]any{"channel": "team"}, "#team is not in the channel registry"},
		{"cotal_channel_mode", map[string]any{"channel": "team", "mode": "quiet"}, "#team is now quiet"},
		{"cotal_channels", nil, "* #team — durable, backstop active; replay on; mode quiet"},
		{"cotal_leave", map[string]any{"channel": "team"}, "Left #team."},
		{"cotal_join", map[string]any{"channel": "team"}, "Joined #team (durable backstop active)"},
	} {
		if got := c.ok(call.tool, call.args); !strings.Contains(got, call.want) {
			t.Errorf("%s: %q, want %q", call.tool, got, call.want)
		}
	}

	// The client leaves: the server exits and alice goes offline at once,
	// saying so (not by a heartbeat lapsing, which a slow machine's wait
	// could not tell from it).
	if code := c.close(); code != 0 {
		t.Errorf("cotal mcp exited %d after its client left\nstderr: %s", code, c.stderr)
	}
	waitFor(t, 30*time.Second, func() error {
		if st, why, err := rosterOffline(t, home, "alice"); err != nil || st != "offline" || why != "said offline" {
			return fmt.Errorf("alice after her MCP server exited: %q (%q) %v", st, why, err)
		}
		return nil
	})

	// With the mesh down, a tool call is refused, saying so.
	c2 := startMCP(t, env, cotalBin, "mcp", "--creds", alice.Creds)
	c2.waitOK("cotal_roster", nil, "alice/dev (you)")
	mustCotal(t, home, "down")
	waitFor(t, 15*time.Second, func() error {
		got, isErr := c2.call("cotal_dm", map[string]any{"to": "bob", "text": "x"})
		if !isErr || !strings.HasPrefix(got, "Not connected to the mesh") {
			return fmt.Errorf("cotal_dm with the mesh down: %v %q", isErr, got)
		}
		return nil
	})
}

// A server started while the mesh is down answers its client at once and
// refuses the tools with the way out.
func TestMCPServerStartsWithTheMeshDown(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	alice := mint(t, home, "alice")
	mustCotal(t, home, "down")
	c := startMCP(t, cotalEnv(home), cotalBin, "mcp", "--creds", alice.Creds)
	got, isErr := c.call("cotal_inbox", nil)
	if !isErr || !strings.HasPrefix(got, "Not connected to the mesh: mesh is not running for space default (start it with `cotal up --detach --space default`") {
		t.Errorf("cotal_inbox with no mesh: %v %q", isErr, got)
	}
	if got := c.ok("cotal_orientation", nil); !strings.Contains(got, `You are alice (id local.alice) in space "default", as your credential says.`) {
		t.Errorf("orientation with no mesh:\n%s", got)
	}
	// The mesh comes up: the server finds it.
	upDetached(t, home)
	c.waitOK("cotal_roster", nil, "alice (you)")
}

// cotal mcp config prints, for each client, a command line and stanzas that
// work as printed: the command lines are run through a shell against
// stand-ins for the clients, and the server each names is started.
func TestMCPConfigWorksAsPrinted(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	alice := mint(t, home, "alice")
	// A path with a space and a quote must survive the shell.
	dir := filepath.Join(t.TempDir(), "my agent's creds")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(dir, "alice.creds")
	b, err := os.ReadFile(alice.Creds)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(creds, b, 0o600); err != nil {
		t.Fatal(err)
	}
	exe, _ := filepath.EvalSymlinks(cotalBin)
	wantArgv := []string{exe, "mcp", "--creds", creds}

	// Stand-ins for the clients' CLIs print their arguments, one per line.
	bin := t.TempDir()
	for _, name := range []string{"claude", "codex"} {
		script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shellArgs := func(line string) []string {
		cmd := exec.Command("sh", "-c", line)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("running %q: %v", line, err)
		}
		return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	}
	config := func(client string) string {
		cmd := exec.Command(cotalBin, "mcp", "config", client, "--creds", filepath.Join(".", "alice.creds"))
		cmd.Env, cmd.Dir = cotalEnv(home), dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("mcp config %s: %v\n%s", client, err, out)
		}
		return string(out)
	}
	lineStarting := func(text, prefix string) string {
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("no line starting %q in:\n%s", prefix, text)
		return ""
	}
	jsonPart := func(text string) map[string]any {
		i := strings.Index(text, "\n{")
		var v map[string]any
		if i < 0 || json.Unmarshal([]byte(text[i+1:]), &v) != nil {
			t.Fatalf("no JSON stanza in:\n%s", text)
		}
		return v
	}
	strs := func(v any) []string {
		var out []string
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		return out
	}
	serves := func(argv []string) {
		t.Helper()
		c := startMCP(t, cotalEnv(home), argv...)
		c.waitOK("cotal_orientation", nil, "You are alice")
		c.close()
	}

	text := config("claude")
	if got := shellArgs(lineStarting(text, "claude mcp add ")); !reflect.DeepEqual(got, append([]string{"mcp", "add", "cotal", "--"}, wantArgv...)) {
		t.Errorf("claude mcp add line gives %q", got)
	}
	srv := jsonPart(text)["mcpServers"].(map[string]any)["cotal"].(map[string]any)
	argv := append([]string{srv["command"].(string)}, strs(srv["args"])...)
	if !reflect.DeepEqual(argv, wantArgv) {
		t.Errorf(".mcp.json stanza runs %q", argv)
	}
	serves(argv)

	text = config("codex")
	if got := shellArgs(lineStarting(text, "codex mcp add ")); !reflect.DeepEqual(got, append([]string{"mcp", "add", "cotal", "--"}, wantArgv...)) {
		t.Errorf("codex mcp add line gives %q", got)
	}
	wantC := []string{"-c", `mcp_servers.cotal.command="` + exe + `"`, "-c", `mcp_servers.cotal.args=["mcp", "--creds", "` + creds + `"]`}
	if got := shellArgs(lineStarting(text, "codex -c ")); !reflect.DeepEqual(got, wantC) {
		t.Errorf("codex -c line gives %q, want %q", got, wantC)
	}
	if !strings.Contains(text, "[mcp_servers.cotal]\ncommand = \""+exe+"\"\nargs = [\"mcp\", \"--creds\", \""+creds+"\"]\n") {
		t.Errorf("codex config.toml stanza:\n%s", text)
	}

	text = config("opencode")
	oc := jsonPart(text)["mcp"].(map[string]any)["cotal"].(map[string]any)
	if oc["type"] != "local" || oc["enabled"] != true || !reflect.DeepEqual(strs(oc["command"]), wantArgv) {
		t.Errorf("opencode stanza: %v", oc)
	}
	serves(strs(oc["command"]))

	if _, stderr, code := runCotal(t, home, "mcp", "config", "vscode", "--creds", creds); code != 2 || !strings.Contains(stderr, "use claude, codex, opencode") {
		t.Errorf("unknown client: exit %d %q", code, stderr)
	}
	if _, stderr, code := runCotal(t, home, "mcp", "config", "claude"); code != 2 || !strings.Contains(stderr, "--creds FILE") {
		t.Errorf("no identity: exit %d %q", code, stderr)
	}
}

// Inside a seat, `cotal mcp` with nothing but the seat's environment acts
// as the seat through its connector in the manager.
func TestMCPServerInsideASeat(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	out := t.TempDir()
	dir := project(t, map[string]string{
		"worker": fmt.Sprintf("agent: command\ncommand: sh\nargs: [\"-c\", %q]\nenv: {OUT: %q}\nsubscribe: [team]\nallowPublish: [team]",
			`env > "$OUT/env.tmp" && mv "$OUT/env.tmp" "$OUT/env"; echo up; exec sleep 600`, out),
	})
	if _, stderr, code := runIn(t, home, dir, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	alice, stderr, code := runIn(t, home, dir, "mint", "alice", "--json")
	if code != 0 {
		t.Fatalf("mint: %s", stderr)
	}
	var minted mintedID
	if err := json.Unmarshal([]byte(alice), &minted); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := runIn(t, home, dir, "spawn", "worker"); code != 0 || !strings.Contains(out, "ready: worker is up") {
		t.Fatalf("spawn worker: exit %d\n%s%s", code, out, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "env"))
	if err != nil {
		t.Fatal(err)
	}
	env := cotalEnv(home)
	iid := ""
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "COTAL_") {
			env = append(env, line)
			if k == "COTAL_MANAGER_INSTANCE" {
				iid = v
			}
		}
	}
	if iid == "" {
		t.Fatalf("the seat's environment has no manager instance:\n%s", b)
	}
	c := startMCP(t, env, cotalBin, "mcp")
	c.waitOK("cotal_orientation", nil, "You are worker (id local.worker) on the cotal mesh, space \"seats\", through your seat's connector on manager "+iid)

	if _, stderr, code := runIn(t, home, dir, "--creds", minted.Creds, "send", "dm", "worker", "hi-worker"); code != 0 {
		t.Fatalf("send dm worker: %s", stderr)
	}
	c.waitOK("cotal_inbox", nil, "[DM from alice] hi-worker")
	if got := c.ok("cotal_inbox", nil); got != "Inbox empty, no new messages." {
		t.Errorf("second inbox: %q", got)
	}
	c.ok("cotal_dm", map[string]any{"to": "alice", "text": "hi-alice"})
	stdout, stderr, code := runIn(t, home, dir, "--creds", minted.Creds, "inbox")
	if code != 0 || stdout != "[DM from worker] hi-alice\n" {
		t.Errorf("alice's inbox: exit %d %q %s", code, stdout, stderr)
	}
	c.ok("cotal_channel_mode", map[string]any{"channel": "team", "mode": "quiet"})
	if got := c.ok("cotal_channels", nil); !strings.Contains(got, "* #team — durable, backstop active; replay on; mode quiet") {
		t.Errorf("cotal_channels:\n%s", got)
	}
}
