package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The dashboard tests drive the real binary in tmux as a person would:
// start it, read the screen, type keys.

// screenWait bounds one wait for something to appear on the screen.
const screenWait = 20 * time.Second

var tmuxSeq atomic.Int64

// tmuxCotal is bare `cotal` running in a detached tmux session on a
// private tmux server.
type tmuxCotal struct {
	t      *testing.T
	socket string
}

// startDashboard runs bare cotal with COTAL_HOME=home in a 120x40 tmux
// pane; when it exits the pane prints EXIT=<code> and stays.
func startDashboard(t *testing.T, home string) *tmuxCotal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	if out, _, _ := runCotal(t, home, "--help"); !strings.Contains(out, "--no-bell") {
		t.Skip("bare cotal is not the dashboard in this build (root RunE must call runDashboardCmd)")
	}
	downOnCleanup(t, home, nil) // a hosting dashboard left behind is stopped like any mesh
	tc := &tmuxCotal{t: t, socket: fmt.Sprintf("cotal-e2e-%d-%d", os.Getpid(), tmuxSeq.Add(1))}
	var env []string
	for _, kv := range cotalEnv(home) {
		if k, _, _ := strings.Cut(kv, "="); k == "COTAL_HOME" || k == "HOME" || k == "PATH" {
			env = append(env, shellQuote(kv))
		}
	}
	script := fmt.Sprintf("env %s %s; echo EXIT=$?; sleep 600", strings.Join(env, " "), shellQuote(cotalBin))
	tc.tmux("-f", "/dev/null", "new-session", "-d", "-s", "dash", "-x", "120", "-y", "40", "-c", fakeHome, "sh", "-c", script)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last screen:\n%s", tc.screen())
		}
		_ = exec.Command("tmux", "-L", tc.socket, "kill-server").Run()
	})
	return tc
}

func (tc *tmuxCotal) tmux(args ...string) string {
	tc.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tc.socket}, args...)...).CombinedOutput()
	if err != nil {
		tc.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (tc *tmuxCotal) screen() string {
	out, _ := exec.Command("tmux", "-L", tc.socket, "capture-pane", "-p", "-t", "dash").CombinedOutput()
	return string(out)
}

// waitScreen polls until every want is on the screen.
func (tc *tmuxCotal) waitScreen(wants ...string) {
	tc.t.Helper()
	waitFor(tc.t, screenWait, func() error {
		s := tc.screen()
		for _, w := range wants {
			if !strings.Contains(s, w) {
				return fmt.Errorf("screen lacks %q:\n%s", w, s)
			}
		}
		return nil
	})
}

// keys sends tmux key names (Enter, Escape, q).
func (tc *tmuxCotal) keys(keys ...string) {
	tc.tmux(append([]string{"send-keys", "-t", "dash"}, keys...)...)
}

// typeText types literal text.
func (tc *tmuxCotal) typeText(s string) { tc.tmux("send-keys", "-t", "dash", "-l", s) }

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestDashboardHostsFeedsSendsAndStopsTheMesh(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	d := startDashboard(t, home)
	d.waitScreen("HOSTING", "mesh default runs in this process", "nothing waiting - all clear", "ROSTER")

	alice := mint(t, home, "alice", "--allow-publish", "general")
	mustCotal(t, home, "--creds", alice.Creds, "send", "msg", "general", "hello from alice")
	d.waitScreen("#general alice: hello from alice")

	d.keys("c")
	d.waitScreen("send>")
	d.typeText("#general hi from the dashboard")
	d.keys("Enter")
	d.waitScreen("→ #general: stored seq", "#general you: hi from the dashboard")
	if out := mustCotal(t, home, "history", "general"); !strings.Contains(out, "hi from the dashboard") {
		t.Errorf("the dashboard's post is not in #general's history:\n%s", out)
	}

	d.keys("q")
	d.waitScreen("mesh default stopped", "EXIT=0")
	if _, code := statusJSON(t, home); code != 1 {
		t.Errorf("status after quitting the hosting dashboard: exit %d, want 1 (down)", code)
	}
}

func TestDashboardAsClientLeavesTheMeshUp(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	_, pid := upDetached(t, home)
	d := startDashboard(t, home)
	d.waitScreen("CLIENT", fmt.Sprintf("of mesh default (pid %d)", pid), "q leaves it running")
	d.keys("q")
	d.waitScreen("still running", "EXIT=0")
	s, code := statusJSON(t, home)
	if code != 0 || !s.Up || s.PID != pid {
		t.Errorf("after quitting the client dashboard: status exit %d, up %v, pid %d; want the mesh (pid %d) still up", code, s.Up, s.PID, pid)
	}
}
