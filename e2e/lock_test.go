package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/broker"
)

// The store lock, never broker.json, says whether a space's mesh runs.

func TestACorruptBrokerJSONDoesNotHideARunningMesh(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	_, pid := upDetached(t, home)
	file := filepath.Join(home, "spaces", "default", "broker.json")
	if err := os.WriteFile(file, []byte(`{"url": "nats://`), 0o644); err != nil {
		t.Fatal(err)
	}
	damage := file + " is not valid"

	out, _, code := runCotal(t, home, "status", "--json")
	var st struct {
		Up         bool   `json:"up"`
		PID        int    `json:"pid"`
		BrokerFile string `json:"brokerFileError"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 1 || !st.Up || st.PID != pid || !strings.Contains(st.BrokerFile, damage) {
		t.Errorf("status --json: exit %d %s; want exit 1, up as pid %d, the damage named", code, out, pid)
	}
	out, stderr, code := runCotal(t, home, "up", "--detach")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("mesh default already running (pid %d)", pid)) || !strings.Contains(out, damage) {
		t.Errorf("up --detach: exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	_, stderr, code = runCotal(t, home, "roster")
	if code != 1 || strings.Contains(stderr, "not running") || !strings.Contains(stderr, damage) {
		t.Errorf("roster: exit %d %q; want the damage named, not 'not running'", code, stderr)
	}
	// Bare down cannot ask the managers about seats: it refuses, naming why.
	_, stderr, code = runCotal(t, home, "down")
	if code != 1 || !strings.Contains(stderr, damage) || !broker.PIDAlive(pid) {
		t.Errorf("down: exit %d %q (mesh alive: %v); want a refusal naming the damage", code, stderr, broker.PIDAlive(pid))
	}
	out, stderr, code = runCotal(t, home, "down", "--with-agents")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("mesh default stopped (pid %d)", pid)) || !strings.Contains(stderr, damage) {
		t.Errorf("down --with-agents: exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	waitGone(t, pid)
}

func TestDownNeverSignalsAPidReadFromBrokerJSON(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	mustCotal(t, home, "down")
	// As after a crash: broker.json not marked stopped, and its pid reused
	// by another process.
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	file := filepath.Join(home, "spaces", "default", "broker.json")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	delete(rec, "stopped")
	rec["pid"] = other.Process.Pid
	if b, err = json.Marshal(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{{"down"}, {"down", "--with-agents"}} {
		out, stderr, code := runCotal(t, home, args...)
		if code != 0 || out != "mesh default is not running\n" {
			t.Errorf("%s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, stderr)
		}
	}
	if !broker.PIDAlive(other.Process.Pid) {
		t.Fatalf("down signalled pid %d, which broker.json named but no mesh held", other.Process.Pid)
	}
	if st, code := statusJSON(t, home); code != 1 || st.Up {
		t.Errorf("status: exit %d %+v; want down", code, st)
	}
	if _, stderr, code := runCotal(t, home, "roster"); code != 1 || !strings.Contains(stderr, "mesh is not running") {
		t.Errorf("roster: exit %d %q; want 'mesh is not running'", code, stderr)
	}
}
