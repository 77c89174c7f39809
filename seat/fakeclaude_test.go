package seat_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A stand-in for Claude Code in a seat, for the tests of the claude
// harness's hooks that need no model: the test binary, run as `claude`
// from a directory put first on PATH, running the cotal binary the tests
// built ($COTAL_BIN) where Claude Code would run the seat's. Like Claude Code it connects to the
// seat's `cotal mcp`, runs its SessionStart hook, draws its prompt box, and
// runs the UserPromptSubmit hook for every line typed at it. The test
// drives every other hook through files in the directory the environment
// names: cmd-N.json asks it to run `cotal hook <event>` with an input
// (optionally stopping the hook with SIGTERM after a while), res-N.json
// says what the hook printed and how it exited; typed.log holds the lines
// typed at it, prompts.log the outputs of its prompt hooks.
const fakeClaudeEnv = "COTAL_TEST_FAKE_CLAUDE"

// fakeHoldEnv makes the stand-in wait for a "start" file before its
// session starts.
const fakeHoldEnv = "COTAL_TEST_FAKE_HOLD"

// fakeSession is the session id the stand-in reports.
const fakeSession = "5e551011-0000-4000-8000-00000000c1a0"

type fakeCmd struct {
	Event  string         `json:"event"`
	Input  map[string]any `json:"input"`
	TermMs int            `json:"termMs,omitempty"` // SIGTERM the hook after this long
	// Stream hands the event to the stand-in's one `cotal hook --stream`
	// (started with the first such event) instead of a hook of its own;
	// Raw is a line to write to it as it is; EndStream closes its stdin.
	Stream    bool   `json:"stream,omitempty"`
	Raw       string `json:"raw,omitempty"`
	EndStream bool   `json:"endStream,omitempty"`
}

type fakeRes struct {
	Event  string `json:"event"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	Code   int    `json:"code"`
}

func fakeClaude() {
	dir := os.Getenv(fakeClaudeEnv)
	logf := func(name, format string, a ...any) {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintf(f, format+"\n", a...)
			f.Close()
		}
	}
	cl := sdk.NewClient(&sdk.Implementation{Name: "fake-claude", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cs, err := cl.Connect(ctx, &sdk.CommandTransport{Command: exec.Command(os.Getenv("COTAL_BIN"), "mcp")}, nil)
	cancel()
	if err != nil {
		fmt.Println("fake claude: cotal mcp:", err)
		os.Exit(1)
	}
	defer cs.Close()
	// Held: its session starts once the test says (a file "start").
	for os.Getenv(fakeHoldEnv) != "" {
		if _, err := os.Stat(filepath.Join(dir, "start")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r := runFakeHook(fakeCmd{Event: "SessionStart", Input: map[string]any{"source": "startup"}})
	b, _ := json.Marshal(r)
	logf("start.log", "%s", b)
	stream := &fakeStream{}
	rule := strings.Repeat("─", 60)
	fmt.Printf("fake claude\n\n%s\n❯ \n%s\n", rule, rule)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			line := sc.Text()
			logf("typed.log", "%s", line)
			r := runFakeHook(fakeCmd{Event: "UserPromptSubmit", Input: map[string]any{"prompt": line}})
			b, _ := json.Marshal(r)
			logf("prompts.log", "%s", b)
		}
	}()
	for {
		ents, _ := os.ReadDir(dir)
		var cmds []string
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "cmd-") && strings.HasSuffix(e.Name(), ".json") {
				cmds = append(cmds, e.Name())
			}
		}
		sort.Strings(cmds)
		for _, name := range cmds {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				continue
			}
			var c fakeCmd
			if json.Unmarshal(b, &c) != nil {
				continue // still being written
			}
			_ = os.Remove(filepath.Join(dir, name))
			res := filepath.Join(dir, "res-"+strings.TrimPrefix(name, "cmd-"))
			put := func(r fakeRes) {
				out, _ := json.Marshal(r)
				_ = os.WriteFile(res+".tmp", out, 0o600)
				_ = os.Rename(res+".tmp", res)
			}
			if c.Stream || c.Raw != "" || c.EndStream {
				// Side by side, as a plugin's events are.
				go func() { put(stream.run(c)) }()
				continue
			}
			put(runFakeHook(c))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runFakeHook runs `cotal hook <event>` as Claude Code would, with the
// session's fields added to the input.
func runFakeHook(c fakeCmd) fakeRes {
	in := map[string]any{"session_id": fakeSession, "hook_event_name": c.Event, "cwd": "/", "transcript_path": "/dev/null"}
	for k, v := range c.Input {
		in[k] = v
	}
	b, _ := json.Marshal(in)
	cmd := exec.Command(os.Getenv("COTAL_BIN"), "hook", c.Event)
	cmd.Stdin = bytes.NewReader(b)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return fakeRes{Event: c.Event, Stderr: err.Error(), Code: -1}
	}
	if c.TermMs > 0 {
		t := time.AfterFunc(time.Duration(c.TermMs)*time.Millisecond, func() { _ = cmd.Process.Signal(syscall.SIGTERM) })
		defer t.Stop()
	}
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return fakeRes{Event: c.Event, Stdout: stdout.String(), Stderr: stderr.String(), Code: code}
}

// fakeStream is the stand-in's `cotal hook --stream`, as opencode's
// plugin keeps one: each event a line with an id, answered by its id.
type fakeStream struct {
	mu      sync.Mutex
	in      io.WriteCloser
	next    int64
	pending map[int64]chan fakeRes
}

func (s *fakeStream) start() error {
	if s.in != nil {
		return nil
	}
	cmd := exec.Command(os.Getenv("COTAL_BIN"), "hook", "--stream")
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	s.in, s.pending = in, map[int64]chan fakeRes{}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var a struct {
				ID     int64
				Output string
				Error  string
			}
			if json.Unmarshal(sc.Bytes(), &a) != nil {
				continue
			}
			s.mu.Lock()
			ch := s.pending[a.ID]
			delete(s.pending, a.ID)
			s.mu.Unlock()
			if ch != nil {
				ch <- fakeRes{Stdout: a.Output, Stderr: a.Error}
			}
		}
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for id, ch := range s.pending {
			ch <- fakeRes{Stderr: "the stream ended unanswered: " + stderr.String(), Code: -1}
			delete(s.pending, id)
		}
		s.pending[0] = make(chan fakeRes, 1) // what EndStream waits on
		s.pending[0] <- fakeRes{Stderr: stderr.String(), Code: code}
	}()
	return nil
}

// run hands c to the stream and returns its answer.
func (s *fakeStream) run(c fakeCmd) fakeRes {
	s.mu.Lock()
	if err := s.start(); err != nil {
		s.mu.Unlock()
		return fakeRes{Event: c.Event, Stderr: err.Error(), Code: -1}
	}
	if c.EndStream {
		_ = s.in.Close()
		s.mu.Unlock()
		for {
			s.mu.Lock()
			ch := s.pending[0]
			s.mu.Unlock()
			if ch != nil {
				r := <-ch
				r.Event = "end"
				return r
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	s.next++
	id := s.next
	line := c.Raw
	if line == "" {
		in := map[string]any{"session_id": fakeSession, "hook_event_name": c.Event, "cwd": "/", "transcript_path": "/dev/null"}
		for k, v := range c.Input {
			in[k] = v
		}
		b, _ := json.Marshal(hookLineOf(id, c.Event, in))
		line = string(b)
	} else {
		line = strings.ReplaceAll(line, "$ID", fmt.Sprint(id))
	}
	ch := make(chan fakeRes, 1)
	s.pending[id] = ch
	_, err := io.WriteString(s.in, line+"\n")
	s.mu.Unlock()
	if err != nil {
		return fakeRes{Event: c.Event, Stderr: err.Error(), Code: -1}
	}
	r := <-ch
	r.Event = c.Event
	return r
}

// hookLineOf is one event as the stream takes it.
func hookLineOf(id int64, event string, input any) map[string]any {
	return map[string]any{"id": id, "event": event, "input": input}
}

// fakeHarness is a claude seat played by the stand-in, and its files.
type fakeHarness struct {
	t   *testing.T
	dir string
	n   int
}

// fakeClaudePersona puts the stand-in on PATH as claude and writes a
// claude persona of that name run by it; hold makes its session start
// only once the test calls start.
func (h *harness) fakeClaudePersona(t *testing.T, name string, hold bool) *fakeHarness {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "claude")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := t.TempDir()
	holdEnv := ""
	if hold {
		holdEnv = ", " + fakeHoldEnv + ": \"1\""
	}
	body := fmt.Sprintf("---\nname: %s\nagent: claude\nenv: {%s: %q, COTAL_BIN: %q%s}\n---\nYou are a stand-in.\n", name, fakeClaudeEnv, dir, cotalBin, holdEnv)
	if err := os.MkdirAll(filepath.Join(h.project, ".cotal", "agents"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.project, ".cotal", "agents", name+".md"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return &fakeHarness{t: t, dir: dir}
}

// start lets a held stand-in's session start.
func (f *fakeHarness) start() {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, "start"), nil, 0o600); err != nil {
		f.t.Fatal(err)
	}
}

// hook runs one hook in the stand-in and returns what it printed.
func (f *fakeHarness) hook(c fakeCmd) fakeRes {
	f.t.Helper()
	f.n++
	name := fmt.Sprintf("%06d.json", f.n)
	b, _ := json.Marshal(c)
	tmp := filepath.Join(f.dir, "tmp-"+name)
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(f.dir, "cmd-"+name)); err != nil {
		f.t.Fatal(err)
	}
	var r fakeRes
	waitFor(f.t, 30*time.Second, func() error {
		b, err := os.ReadFile(filepath.Join(f.dir, "res-"+name))
		if err != nil {
			return fmt.Errorf("the stand-in ran no %s hook yet", c.Event)
		}
		return json.Unmarshal(b, &r)
	})
	if r.Code != 0 {
		f.t.Fatalf("cotal hook %s exited %d (stderr %q): a hook must always exit 0", c.Event, r.Code, r.Stderr)
	}
	return r
}

// lines are the lines of one of the stand-in's logs.
func (f *fakeHarness) lines(name string) []string {
	b, _ := os.ReadFile(filepath.Join(f.dir, name))
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// context is the additional context a Claude hook output carries, "" for
// none.
func hookContext(t testing.TB, out string) string {
	t.Helper()
	if out == "" {
		return ""
	}
	var o struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("hook output %q is not Claude Code's JSON: %v", out, err)
	}
	return o.HookSpecificOutput.AdditionalContext
}
