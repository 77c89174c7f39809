package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runCotalInput is runCotal with stdin as the process's standard input.
func runCotalInput(t *testing.T, home, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, cotalBin, args...)
	cmd.Env = cotalEnv(home)
	cmd.Dir = fakeHome
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("cotal %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// historyTexts is the text of every retained post of channel, oldest
// first, as `cotal history --json` prints them.
func historyTexts(t *testing.T, home, channel string) []string {
	t.Helper()
	var h struct {
		Items []struct {
			Msg struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"msg"`
		} `json:"items"`
	}
	stdout := mustCotal(t, home, "history", channel, "--json")
	if err := json.Unmarshal([]byte(stdout), &h); err != nil {
		t.Fatalf("history --json: %v\n%s", err, stdout)
	}
	var texts []string
	for _, it := range h.Items {
		for _, p := range it.Msg.Parts {
			texts = append(texts, p.Text)
		}
	}
	return texts
}

// TestSendBodyFromStdinOrFileWithinTheMeshLimit: `-` and --file carry the
// body; one the broker would not take is refused naming its limit (it
// failed with `nats: maximum payload exceeded`, exit 1).
func TestSendBodyFromStdinOrFileWithinTheMeshLimit(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	dir := t.TempDir()

	if stdout, stderr, code := runCotalInput(t, home, "from standard input\n", "send", "msg", "team", "-"); code != 0 {
		t.Fatalf("send msg team -: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	file := filepath.Join(dir, "body.txt")
	if err := os.WriteFile(file, []byte("line one\nline two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustCotal(t, home, "send", "msg", "team", "--file", file)
	want := []string{"from standard input", "line one\nline two"}
	if got := historyTexts(t, home, "team"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("history of #team: %q, want %q", got, want)
	}

	const limit = 1 << 20 // the embedded broker's max payload
	for name, size := range map[string]int{
		"text over the limit":              limit + 1000,
		"text under, envelope over it":     limit - 100,
		"text over the limit, from a pipe": limit + 1,
	} {
		body := strings.Repeat("a", size)
		args := []string{"send", "msg", "team", "--file", filepath.Join(dir, "big")}
		stdin := ""
		if strings.HasSuffix(name, "pipe") {
			args, stdin = []string{"send", "dm", "root", "-"}, body
		} else if err := os.WriteFile(args[4], []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runCotalInput(t, home, stdin, args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "the mesh takes at most 1024 KiB per message") ||
			!strings.Contains(stderr, "nothing was sent") || strings.Contains(stderr, "nats:") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d\nstdout %q\nstderr %q\nwant exit 2 and one line naming the limit in KiB", name, code, stdout, stderr)
		}
	}
	if got := historyTexts(t, home, "team"); len(got) != len(want) {
		t.Errorf("history of #team after the refusals holds %d posts, want %d", len(got), len(want))
	}
}

// TestHistoryOfAnUnknownChannelAndReadRefusals: a channel nobody
// registered or posted to is unknown, exit 1, with the close ones named
// (it said "no retained posts", exit 0); a read refusal speaks of reading,
// never of publishing; an agent's answer comes at once, not after the
// deadline of a storage read its credential may not make.
func TestHistoryOfAnUnknownChannelAndReadRefusals(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	mustCotal(t, home, "send", "msg", "team", "hello")
	mustCotal(t, home, "channels", "set", "quiet", "--replay", "on")
	alice := mint(t, home, "alice", "--subscribe", "team", "--allow-publish", "team")
	carol := mint(t, home, "carol", "--subscribe", "team", "--allow-subscribe", ">")

	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"never used", []string{"history", "nosuch"}, 1, "unknown channel #nosuch: it was never registered and has no retained posts"},
		{"close to a used one", []string{"history", "tem"}, 1, "unknown channel #tem: it was never registered and has no retained posts; did you mean #team?"},
		{"close to a registered one", []string{"history", "quite"}, 1, "did you mean #quiet?"},
		{"agent, never used", []string{"--creds", carol.Creds, "history", "nosuch"}, 1, "unknown channel #nosuch"},
		{"pattern", []string{"--creds", alice.Creds, "history", ">"}, 2, `history reads one channel at a time: ">" is a pattern`},
		{"outside the read ACL", []string{"--creds", alice.Creds, "history", "other"}, 1, "not allowed to read #other: it is outside your read ACL (team)"},
	}
	for _, tc := range tests {
		start := time.Now()
		stdout, stderr, code := runCotal(t, home, tc.args...)
		took := time.Since(start)
		if code != tc.code || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "publish") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: cotal %s: exit %d\nstdout %q\nstderr %q\nwant exit %d and one line saying %q", tc.name, strings.Join(tc.args, " "), code, stdout, stderr, tc.code, tc.want)
		}
		if took > 5*time.Second {
			t.Errorf("%s: cotal %s took %s", tc.name, strings.Join(tc.args, " "), took)
		}
	}
	if stdout := mustCotal(t, home, "history", "quiet"); stdout != "#quiet has no retained posts\n" {
		t.Errorf("history of a registered channel with no posts: %q", stdout)
	}
	start := time.Now()
	if stdout := mustCotal(t, home, "--creds", carol.Creds, "channels", "list"); !strings.Contains(stdout, "quiet") {
		t.Errorf("channels list as an agent:\n%s", stdout)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("channels list as an agent took %s", took)
	}
}

// TestJoinSaysTheMeshStopped: a terminal on the mesh whose mesh is stopped
// says so in words and exits 1. It stayed, printing the delivery service's
// and the connection's errors, until its input ended, then exited 0.
func TestJoinSaysTheMeshStopped(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	p := startCotal(t, home, "join", "--name", "bob", "--channel", "team")
	waitFor(t, 15*time.Second, func() error {
		if !strings.Contains(p.stdout.String(), "joined space default as local.bob") {
			return fmt.Errorf("join has not joined yet\nstdout: %s\nstderr: %s", p.stdout, p.stderr)
		}
		return nil
	})
	if stdout, stderr, code := runCotal(t, home, "down"); code != 0 {
		t.Fatalf("down: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	code := p.wait(t, 15*time.Second)
	stderr := p.stderr.String()
	if code != 1 || stderr != "cotal: mesh default stopped; you have left it (`cotal up --detach` starts it again, then join again)\n" {
		t.Errorf("join after down: exit %d\nstderr %q\nwant exit 1 and one line saying the mesh stopped", code, stderr)
	}
}

// complete runs the shell's completion request for args (the last one is
// the word being typed) from dir in space seats, and returns the offered
// words, the directive line, and how long it took.
func complete(t *testing.T, home, dir string, args ...string) (words []string, directive string, took time.Duration) {
	t.Helper()
	start := time.Now()
	stdout, stderr, code := runIn(t, home, dir, append([]string{"__complete"}, args...)...)
	took = time.Since(start)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != 0 || len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
		t.Fatalf("__complete %q: exit %d\nstdout %q\nstderr %q", args, code, stdout, stderr)
	}
	// cobra says which directive it ended with on stderr, which the
	// shells discard; nothing else may be there.
	if rest := strings.TrimSpace(regexp.MustCompile(`Completion ended with directive: .*`).ReplaceAllString(stderr, "")); rest != "" {
		t.Errorf("__complete %q wrote to stderr: %q", args, rest)
	}
	for _, l := range lines[:len(lines)-1] {
		w, _, _ := strings.Cut(l, "\t")
		words = append(words, w)
	}
	return words, lines[len(lines)-1], took
}

// TestCompletionOffersTheMeshNames: `cotal completion`'s scripts complete
// seats, personas, channels, peers and roles from the running mesh (they
// completed command names only), quickly, and offer nothing (no error
// either) when the mesh is down.
func TestCompletionOffersTheMeshNames(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{"shell": "agent: command\ncommand: sh"})

	for _, args := range [][]string{{"screen", ""}, {"send", "dm", ""}, {"history", "t"}, {"send", "ask", ""}} {
		words, directive, took := complete(t, home, dir, args...)
		if len(words) != 0 || directive != ":4" || took > 3*time.Second {
			t.Errorf("mesh down: __complete %q offered %q (%s) in %s; want nothing, no files, at once", args, words, directive, took)
		}
	}
	if words, _, _ := complete(t, home, dir, "spawn", ""); strings.Join(words, ",") != "shell" {
		t.Errorf("mesh down: spawn completes %q, want the project's persona shell", words)
	}

	if _, stderr, code := runIn(t, home, dir, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	if out, stderr, code := runIn(t, home, dir, "spawn", "shell"); code != 0 {
		t.Fatalf("spawn shell: exit %d\n%s\n%s", code, out, stderr)
	}
	runIn(t, home, dir, "channels", "set", "ops", "--replay", "on")
	runIn(t, home, dir, "send", "msg", "team", "hello")
	startCotal(t, home, "--space", "seats", "join", "--name", "bob", "--role", "reviewer", "--channel", "team")

	tests := []struct {
		args []string
		want string
	}{
		{[]string{"screen", ""}, "shell"},
		{[]string{"stop", "sh"}, "shell"},
		{[]string{"input", ""}, "shell"},
		{[]string{"spawn", ""}, "shell"},
		{[]string{"mint", ""}, "shell"},
		{[]string{"history", ""}, "clear,limit,ops,team"}, // its subcommands too
		{[]string{"send", "msg", "o"}, "ops"},
		{[]string{"join", "--channel", ""}, "ops,team"},
		{[]string{"send", "dm", "b"}, "bob"},
		{[]string{"send", "msg", "team", "--mention", "b"}, "bob"},
		{[]string{"send", "ask", ""}, "reviewer"},
		{[]string{"send", "dm", "bob", ""}, ""},
		{[]string{"use", ""}, "seats"},
	}
	for _, tc := range tests {
		waitFor(t, 15*time.Second, func() error {
			words, directive, took := complete(t, home, dir, tc.args...)
			if strings.Join(words, ",") != tc.want || directive != ":4" {
				return fmt.Errorf("__complete %q offered %q (%s), want %q", tc.args, words, directive, tc.want)
			}
			if took > 3*time.Second {
				t.Errorf("__complete %q took %s", tc.args, took)
			}
			return nil
		})
	}
}
