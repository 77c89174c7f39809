package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// resumeRow is the part of a `cotal ps --json` row the preserve tests read.
type resumeRow struct {
	Name         string `json:"name"`
	LifecycleUID string `json:"lifecycleUid"`
	PID          int    `json:"pid"`
	Process      string `json:"process"`
	State        string `json:"state"`
	ResumedMs    int64  `json:"resumedMs"`
	ResumedFrom  string `json:"resumedFrom"`
}

func resumeRows(t *testing.T, home, dir string) map[string]resumeRow {
	t.Helper()
	out, stderr, code := runIn(t, home, dir, "ps", "--json")
	if code != 0 {
		t.Fatalf("ps --json: exit %d: %s", code, stderr)
	}
	var cs struct {
		Rows []resumeRow `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		t.Fatalf("ps --json: %v\n%s", err, out)
	}
	rows := map[string]resumeRow{}
	for _, r := range cs.Rows {
		rows[r.Name] = r
	}
	return rows
}

// gatedLogger is a command persona that waits for its gate file, then
// says it is ready and appends whatever is typed into it (what the
// manager injects: its DMs and channel posts) to <logs>/<name>.log.
func gatedLogger(logs string) string {
	script := fmt.Sprintf("while [ ! -e %[1]s/$COTAL_NAME.gate ]; do sleep 0.05; done; echo ready; exec cat >> %[1]s/$COTAL_NAME.log", logs)
	return fmt.Sprintf("agent: command\ncommand: sh\nargs: [\"-c\", %q]\ninject: true\nsubscribe: [team]\nallowPublish: [team]", script)
}

func readLog(logs, name string) string {
	b, _ := os.ReadFile(filepath.Join(logs, name+".log"))
	return string(b)
}

func gate(t *testing.T, logs, name string, open bool) {
	t.Helper()
	path := filepath.Join(logs, name+".gate")
	if !open {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitLogged waits until every mark is in the seat's log.
func waitLogged(t *testing.T, logs, name string, marks ...string) {
	t.Helper()
	waitFor(t, 60*time.Second, func() error {
		got := readLog(logs, name)
		for _, m := range marks {
			if !strings.Contains(got, m) {
				return fmt.Errorf("%s has not logged %q yet; its log:\n%s", name, m, got)
			}
		}
		return nil
	})
}

// TestPreserveAndResume: down --preserve-state stops two seats reading a
// durable channel (with replay on) and their DMs; the posts and DMs sent
// after the cut, while the resumed seats are not up yet, arrive exactly
// once after the resume, nothing from before the cut comes again, and the
// seats run again under their lifecycle uids; ps says they were resumed.
// The inventory is 0600 and holds no credential.
func TestPreserveAndResume(t *testing.T) {
	t.Parallel()
	home, logs := t.TempDir(), t.TempDir()
	dir := project(t, map[string]string{"alpha": gatedLogger(logs), "beta": gatedLogger(logs)})
	upIn(t, home, dir)
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	t.Cleanup(func() { meshLogOnFailure(t, home) })
	if _, stderr, code := runIn(t, home, dir, "channels", "set", "team", "--class", "durable", "--replay", "on"); code != 0 {
		t.Fatalf("channels set: %s", stderr)
	}
	for _, s := range []string{"alpha", "beta"} {
		gate(t, logs, s, true)
		if out, stderr, code := runIn(t, home, dir, "spawn", s); code != 0 {
			t.Fatalf("spawn %s: exit %d\n%s%s", s, code, out, stderr)
		}
	}
	send := func(args ...string) {
		t.Helper()
		if out, stderr, code := runIn(t, home, dir, append([]string{"send"}, args...)...); code != 0 {
			t.Fatalf("send %v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	send("msg", "team", "precut-post-one")
	send("dm", "alpha", "precut-dm-one")
	waitLogged(t, logs, "alpha", "precut-post-one", "precut-dm-one")
	waitLogged(t, logs, "beta", "precut-post-one")
	before := resumeRows(t, home, dir)

	out, stderr, code := runIn(t, home, dir, "down", "--preserve-state")
	if code != 0 {
		t.Fatalf("down --preserve-state: exit %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, "2 seat(s) preserved: alpha, beta") {
		t.Errorf("down --preserve-state does not name the seats it preserved:\n%s", out)
	}
	for n, r := range before {
		if processAlive(r.PID) {
			t.Errorf("seat %s (pid %d) still runs after down --preserve-state", n, r.PID)
		}
	}
	pdir := filepath.Join(home, "spaces", "seats", "run", "preserved")
	for _, f := range []string{"inventory.json", "ready.json"} {
		fi, err := os.Stat(filepath.Join(pdir, f))
		if err != nil {
			t.Fatalf("after down --preserve-state: %v", err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v; want 0600", f, fi.Mode().Perm())
		}
	}
	inv, _ := os.ReadFile(filepath.Join(pdir, "inventory.json"))
	for _, secret := range []string{"BEGIN NATS USER JWT", "NKEY SEED", "SUA"} {
		if strings.Contains(string(inv), secret) {
			t.Errorf("the inventory holds %q:\n%s", secret, inv)
		}
	}

	// The seats come back held at their gates: what is sent now is sent
	// after the cut and before they run again.
	gate(t, logs, "alpha", false)
	gate(t, logs, "beta", false)
	out, _ = upIn(t, home, dir)
	if !strings.Contains(out, "resumed 2 seat(s) that `down --preserve-state` preserved: alpha, beta") {
		t.Errorf("up does not say it resumed the seats:\n%s", out)
	}
	send("msg", "team", "whiledown-post-two")
	send("dm", "alpha", "whiledown-dm-two")
	send("dm", "beta", "whiledown-dm-three")
	gate(t, logs, "alpha", true)
	gate(t, logs, "beta", true)
	waitLogged(t, logs, "alpha", "whiledown-post-two", "whiledown-dm-two")
	waitLogged(t, logs, "beta", "whiledown-post-two", "whiledown-dm-three")
	// A last post, so what arrives late would be logged before it.
	send("msg", "team", "final-post-four")
	waitLogged(t, logs, "alpha", "final-post-four")
	waitLogged(t, logs, "beta", "final-post-four")

	for seat, marks := range map[string][]string{
		"alpha": {"precut-post-one", "precut-dm-one", "whiledown-post-two", "whiledown-dm-two", "final-post-four"},
		"beta":  {"precut-post-one", "whiledown-post-two", "whiledown-dm-three", "final-post-four"},
	} {
		got := readLog(logs, seat)
		for _, m := range marks {
			if n := strings.Count(got, m); n != 1 {
				t.Errorf("%s logged %q %d times; want once. Its log:\n%s", seat, m, n, got)
			}
		}
	}
	after := resumeRows(t, home, dir)
	for _, n := range []string{"alpha", "beta"} {
		b, a := before[n], after[n]
		if a.LifecycleUID != b.LifecycleUID || a.ResumedMs == 0 || a.Process != "running" || a.PID == b.PID {
			t.Errorf("seat %s after the resume: %+v; want running anew, resumed, lifecycle %s", n, a, b.LifecycleUID)
		}
	}
	ps, _, _ := runIn(t, home, dir, "ps")
	if !regexp.MustCompile(`(?m)^alpha: resumed \d+\S* ago \(its harness keeps no session`).MatchString(ps) {
		t.Errorf("ps does not say alpha was resumed:\n%s", ps)
	}
	if _, err := os.Stat(pdir); !os.IsNotExist(err) {
		t.Errorf("the inventory outlives the resume that consumed it: %v", err)
	}
}

// meshLogOnFailure prints the log of space "seats" when the test failed.
func meshLogOnFailure(t *testing.T, home string) {
	if !t.Failed() {
		return
	}
	b, _ := os.ReadFile(filepath.Join(home, "spaces", "seats", "mesh.log"))
	t.Logf("mesh.log:\n%s", b)
}
