package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestUpInputStopDownSpeakJSON: the commands that print a result print it
// as JSON with --json, and a seat's stop says how it ended.
func TestUpInputStopDownSpeakJSON(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{"shell": "agent: command\ncommand: sh"})
	decode := func(what, out string, v any) {
		t.Helper()
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("%s --json: %v\n%s", what, err, out)
		}
	}
	out, stderr, code := runIn(t, home, dir, "up", "--detach", "--json")
	if code != 0 {
		t.Fatalf("up: exit %d %s", code, stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	var up struct {
		Space, URL string
		PID        int
	}
	decode("up", out, &up)
	if up.Space != "seats" || !strings.HasPrefix(up.URL, "nats://") || up.PID == 0 {
		t.Fatalf("up --json: %+v", up)
	}
	out, _, _ = runIn(t, home, dir, "up", "--detach", "--json")
	var again struct{ AlreadyRunning bool }
	if decode("up again", out, &again); !again.AlreadyRunning {
		t.Fatalf("a second up --json: %s", out)
	}
	if _, stderr, code := runIn(t, home, dir, "up", "--json"); code != 2 || !strings.Contains(stderr, "--detach") {
		t.Fatalf("up --json in the foreground: exit %d %s", code, stderr)
	}

	if out, stderr, code := runIn(t, home, dir, "spawn", "shell"); code != 0 {
		t.Fatalf("spawn: exit %d\n%s\n%s", code, out, stderr)
	}
	out, _, code = runIn(t, home, dir, "input", "shell", "--json", "echo hi")
	var in struct {
		Name  string
		Bytes int
	}
	if decode("input", out, &in); code != 0 || in.Name != "shell" || in.Bytes != len("echo hi")+1 {
		t.Fatalf("input --json: exit %d %s", code, out)
	}
	// A DM the shell never reads waits at its connector, and ps says so.
	if _, stderr, code := runIn(t, home, dir, "send", "dm", "shell", "are you there"); code != 0 {
		t.Fatalf("dm: %s", stderr)
	}
	waitFor(t, 10*time.Second, func() error {
		out, _, _ := runIn(t, home, dir, "ps")
		if !strings.Contains(out, "shell: 1 message waiting; it reads its inbox itself") {
			return fmt.Errorf("ps:\n%s", out)
		}
		return nil
	})
	out, _, code = runIn(t, home, dir, "stop", "shell", "--json")
	var st struct {
		Name, Process, Ended string
	}
	if decode("stop", out, &st); code != 0 || st.Process != "killed SIGHUP" || !strings.Contains(st.Ended, "ended on SIGHUP") {
		t.Fatalf("stop --json: exit %d %s", code, out)
	}
	out, _, code = runIn(t, home, dir, "down", "--json")
	var down struct {
		Stopped bool
		PID     int
	}
	if decode("down", out, &down); code != 0 || !down.Stopped || down.PID != up.PID {
		t.Fatalf("down --json: exit %d %s", code, out)
	}
	out, _, _ = runIn(t, home, dir, "down", "--json")
	if decode("down again", out, &down); down.Stopped {
		t.Fatalf("down of a stopped mesh: %s", out)
	}
}
