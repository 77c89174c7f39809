package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAttachKeysCeilingAndEndings: the detach key from the environment
// (an invalid one is bad input), the manager's --max-sessions ceiling,
// and how an attach ends when its seat exits or is stopped.
func TestAttachKeysCeilingAndEndings(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{"shell": "agent: command\ncommand: sh"})
	if _, stderr, code := runIn(t, home, dir, "up", "--detach", "--max-sessions", "1"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	for _, s := range []string{"shell", "other"} {
		if out, stderr, code := runIn(t, home, dir, "spawn", "shell", "--name", s); code != 0 {
			t.Fatalf("spawn %s: exit %d\n%s%s", s, code, out, stderr)
		}
	}
	if _, stderr, code := runIn(t, home, dir, "up", "--max-sessions", "0"); code != 2 || !strings.Contains(stderr, "--max-sessions 0") {
		t.Fatalf("up --max-sessions 0: exit %d %q, want 2", code, stderr)
	}
	bad := exec.Command(cotalBin, "--space", "seats", "attach", "shell")
	bad.Env, bad.Dir = append(cotalEnv(home), "COTAL_DETACH_KEY=ctrl-m"), dir
	if out, err := bad.CombinedOutput(); exitCode(err) != 2 || !strings.Contains(string(out), "COTAL_DETACH_KEY") {
		t.Fatalf("attach with COTAL_DETACH_KEY=ctrl-m: %v\n%s", err, out)
	}

	tc := startTerm(t, home, dir, 100, 30, "")
	tc.waitScreen("outer$")
	tc.enter("COTAL_DETACH_KEY=ctrl-q " + cotalIn("attach", "shell") + "; echo EXIT=$?")
	tc.enter("echo one-$((1+1))")
	tc.waitLine(`^one-2\s*$`)
	// The ceiling is the manager's, for everyone: a second attach, to
	// another seat, is refused naming the flag.
	if _, stderr, code := runIn(t, home, dir, "attach", "other"); code != 1 || !strings.Contains(stderr, "--max-sessions 1") {
		t.Fatalf("a second attach under --max-sessions 1: exit %d %q", code, stderr)
	}
	// Ctrl-] is a key like any other now (the seat's line kills it).
	tc.keys("C-]", "C-u")
	tc.enter("echo still-$((3*3))")
	tc.waitLine(`^still-9\s*$`)
	tc.keys("C-q")
	tc.waitScreen("[cotal: detached from shell; it runs on]", "EXIT=0")

	// The seat exits: the attach ends with it, exit 0.
	tc.enter("clear; " + cotalIn("attach", "shell") + "; echo EXIT=$?")
	tc.enter("exit")
	tc.waitScreen("[cotal: shell exited]", "EXIT=0")
	if _, stderr, code := runIn(t, home, dir, "attach", "shell"); code != 1 || !strings.Contains(stderr, "is not running") {
		t.Fatalf("attach to an exited seat: exit %d %q", code, stderr)
	}
	if _, stderr, code := runIn(t, home, dir, "attach", "nobody"); code != 2 || !strings.Contains(stderr, "nobody") {
		t.Fatalf("attach to no such seat: exit %d %q", code, stderr)
	}

	// SIGTERM ends the attach with the terminal restored.
	before := filepath.Join(t.TempDir(), "stty.before")
	tc.enter("clear; stty -g > " + before + "; " + cotalIn("attach", "other") + "; echo EXIT=$?")
	waitSessions(t, home, dir, "other", 1, 10*time.Second)
	kids := childPIDs(tc.panePID())
	if len(kids) != 1 {
		t.Fatalf("the shell runs %v, want the one attach", kids)
	}
	if err := syscall.Kill(kids[0], syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	tc.waitScreen("[cotal: attach to other ended by a signal; it runs on]", "EXIT=1")
	tc.enter("stty -g | cmp - " + before + " && echo restored-$((4+4))")
	tc.waitLine(`^restored-8\s*$`)

	// The seat is stopped: gone, exit 0.
	tc.enter("clear; " + cotalIn("attach", "other") + "; echo EXIT=$?")
	waitSessions(t, home, dir, "other", 1, 10*time.Second)
	if out, stderr, code := runIn(t, home, dir, "stop", "other"); code != 0 {
		t.Fatalf("stop: %s%s", out, stderr)
	}
	tc.waitScreen("seat other is gone", "EXIT=0")
}

// childPIDs are the live processes whose parent is pid.
func childPIDs(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, de := range ents {
		n, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", de.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestAttachAcrossAManagerRestart: a manager that stops ends its sessions
// saying so; the client looks for a fresh session and finds its seat gone
// with the old incarnation; without reconnecting it says to re-attach.
func TestAttachAcrossAManagerRestart(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, shellPersona)
	idFile := filepath.Join(t.TempDir(), "second.id")
	startSupervise := func() *exec.Cmd {
		sup := exec.Command(cotalBin, "supervise", "--space", "seats", "--id-file", idFile)
		sup.Env, sup.Dir = cotalEnv(home), dir
		if err := sup.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sup.Process.Kill(); _ = sup.Wait() })
		return sup
	}
	var iid string
	spawnOnSupervise := func(name string) {
		t.Helper()
		waitFor(t, 15*time.Second, func() error {
			b, err := os.ReadFile(idFile)
			if err != nil {
				return err
			}
			var f struct {
				InstanceID string `json:"instanceId"`
			}
			if err := json.Unmarshal(b, &f); err != nil {
				return err
			}
			iid = f.InstanceID
			_, stderr, code := runIn(t, home, dir, "spawn", "shell", "--on", iid, "--name", name)
			if code != 0 {
				return fmt.Errorf("spawn on %s: %s", iid, stderr)
			}
			return nil
		})
	}
	stopSupervise := func(sup *exec.Cmd) {
		t.Helper()
		if err := sup.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		_ = sup.Wait()
	}

	sup := startSupervise()
	spawnOnSupervise("sup")
	tc := startTerm(t, home, dir, 100, 30, "")
	tc.waitScreen("outer$")
	tc.enter(cotalIn("attach", "sup") + "; echo EXIT=$?")
	tc.enter("echo on-sup-$((2*4))")
	tc.waitLine(`^on-sup-8\s*$`)

	stopSupervise(sup)
	tc.waitScreen("[cotal: manager restarted; re-attaching]")
	sup = startSupervise() // the same instance at a new epoch, without the seat
	tc.waitScreen("seat sup is gone", "EXIT=0")

	spawnOnSupervise("sup2")
	tc.enter("clear; " + cotalIn("attach", "--no-reconnect", "sup2") + "; echo EXIT=$?")
	waitSessions(t, home, dir, "sup2", 1, 10*time.Second)
	stopSupervise(sup)
	tc.waitScreen("[cotal: manager restarted; re-attach with `cotal attach sup2`]", "EXIT=1")
}

// TestAttachReconnectsAfterAStall: a client whose terminal stops reading
// while the seat writes leaves the seat's window full; the seat ends the
// session at the stall bound, and once the terminal reads again the
// client says the connection was lost and comes back on a fresh session.
// The seat's side sends a close frame when its stall bound breaks the
// rail, so the client learns of the end as soon as its terminal reads
// again, or at the latest from its own stall bound.
func TestAttachReconnectsAfterAStall(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the 30 s stall bound")
	}
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, map[string]string{
		// A line of a few hundred bytes each tick fills the stopped
		// terminal's buffers in seconds, however slowly a loaded machine
		// ticks, so the stall bound starts soon after the stop.
		"chatty": "agent: command\ncommand: sh\nargs: [\"-c\", \"while :; do echo tick $(date +%s%N) $(printf '%0600d' 0); sleep 0.01; done\"]",
	}, "chatty")
	tc := startTerm(t, home, dir, 80, 24, cotalIn("attach", "chatty"))
	piped := filepath.Join(t.TempDir(), "pane.out")
	tc.tmux("pipe-pane", "-t", "dash", "-o", "cat >> "+shellQuote(piped))
	tc.waitScreen("tick")
	waitSessions(t, home, dir, "chatty", 1, 10*time.Second)
	before := sessionsOn(t, home, dir, "chatty")[0].ID

	resume := tc.stopServer()
	stopped := time.Now()
	waitSessions(t, home, dir, "chatty", 0, stallEnds)
	t.Logf("the seat ended the stalled session after %s", time.Since(stopped).Round(100*time.Millisecond))
	resume()
	waitFor(t, stallEnds, func() error {
		b, _ := os.ReadFile(piped)
		if !regexp.MustCompile(`(?s)\[cotal: connection lost, reconnecting\].*\[cotal: reconnected\]`).Match(b) {
			return fmt.Errorf("the client has not said it reconnected")
		}
		return nil
	})
	waitFor(t, 10*time.Second, func() error {
		s := sessionsOn(t, home, dir, "chatty")
		if len(s) != 1 || s[0].ID == before {
			return fmt.Errorf("sessions %+v, want one new one", s)
		}
		return nil
	})
	tc.waitScreen("tick")
}

func pidOf(s string) (int, error) {
	var pid int
	_, err := fmt.Sscan(strings.TrimSpace(s), &pid)
	return pid, err
}

// TestInputKeysAndScreenFollow: named keys leave vi as a keyboard would;
// an unknown one types nothing; screen --follow prints each change until
// the seat exits.
func TestInputKeysAndScreenFollow(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, shellPersona, "shell")
	follow := exec.Command(cotalBin, "--space", "seats", "screen", "--follow", "--interval", "100ms", "shell")
	var out, errb lockedBuffer
	follow.Env, follow.Dir, follow.Stdout, follow.Stderr = cotalEnv(home), dir, &out, &errb
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- follow.Wait() }()
	t.Cleanup(func() { _ = follow.Process.Kill() })

	// An unknown name refuses the whole line: nothing is typed.
	refused := []string{"input", "--keys", "shell", "e", "c", "h", "o", "Space", "t", "y", "p", "e", "d", "NoSuchKey", "Enter"}
	if _, stderr, code := runIn(t, home, dir, refused...); code != 2 || !strings.Contains(stderr, "NoSuchKey") {
		t.Fatalf("an unknown key: exit %d %q, want 2 naming it", code, stderr)
	}
	if _, stderr, code := runIn(t, home, dir, "input", "--keys", "--no-enter", "shell", "Escape"); code != 2 {
		t.Fatalf("--keys with --no-enter: exit %d %q, want 2", code, stderr)
	}
	if _, stderr, code := runIn(t, home, dir, "input", "shell", "echo after-$((1+1))"); code != 0 {
		t.Fatalf("input: %s", stderr)
	}
	if s := waitSeatScreen(t, home, dir, "shell", "after-2", func(s string) bool { return hasLine(s, "after-2") }); strings.Contains(s, "typed") {
		t.Fatalf("a refused line of keys was typed:\n%s", s)
	}

	if _, stderr, code := runIn(t, home, dir, "input", "shell", "vi"); code != 0 {
		t.Fatalf("input vi: %s", stderr)
	}
	waitSeatScreen(t, home, dir, "shell", "vi's ~ lines", func(s string) bool { return hasLine(s, "~") })
	o, stderr, code := runIn(t, home, dir, "input", "--keys", "shell", "Escape", ":", "q", "!", "Enter")
	if code != 0 || !strings.Contains(o, "sent 5 bytes to shell") {
		t.Fatalf("input --keys: exit %d %q %q", code, o, stderr)
	}
	waitSeatScreen(t, home, dir, "shell", "vi gone", func(s string) bool { return !hasLine(s, "~") })
	if _, stderr, code := runIn(t, home, dir, "input", "shell", "echo keys-$((6*7))"); code != 0 {
		t.Fatalf("input: %s", stderr)
	}
	waitFor(t, screenWait, func() error {
		if !strings.Contains(out.String(), "keys-42") {
			return fmt.Errorf("screen --follow has not printed keys-42:\n%s", out.String())
		}
		return nil
	})
	if n := strings.Count(out.String(), "--- shell "); n < 3 {
		t.Errorf("screen --follow printed %d screens, want the first, vi's and the one after", n)
	}
	if _, stderr, code := runIn(t, home, dir, "input", "shell", "exit"); code != 0 {
		t.Fatalf("input exit: %s", stderr)
	}
	select {
	case err := <-done:
		if err != nil || !strings.Contains(errb.String(), "shell has exited; this is its last screen") {
			t.Fatalf("screen --follow after the seat exited: %v %q", err, errb.String())
		}
	case <-time.After(screenWait):
		t.Fatal("screen --follow did not end with its seat")
	}
}
