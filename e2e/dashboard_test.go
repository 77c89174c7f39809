package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/seat/client"
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
	server int // the tmux server's pid, once known
}

// startDashboard runs bare cotal with COTAL_HOME=home in a 120x40 tmux
// pane; when it exits the pane prints EXIT=<code> and stays.
func startDashboard(t *testing.T, home string) *tmuxCotal {
	t.Helper()
	return startDashboardIn(t, home, fakeHome)
}

// startDashboardIn runs bare cotal with args from dir.
func startDashboardIn(t *testing.T, home, dir string, args ...string) *tmuxCotal {
	t.Helper()
	return startSized(t, home, dir, 120, 40, args...)
}

// startSized runs cotal with args from dir in a w x h tmux pane: bare
// cotal (the dashboard) unless args name a command.
func startSized(t *testing.T, home, dir string, w, h int, args ...string) *tmuxCotal {
	t.Helper()
	return startSizedEnv(t, home, dir, w, h, nil, args...)
}

// startSizedEnv is startSized with extra KEY=VALUE pairs in the
// dashboard's environment (a PATH holding a harness).
func startSizedEnv(t *testing.T, home, dir string, w, h int, extra []string, args ...string) *tmuxCotal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		// CI installs tmux (.ci/run) and asks for these tests; only a
		// developer's machine without tmux may go without them.
		if os.Getenv("COTAL_REQUIRE_TMUX") != "" {
			t.Fatal("tmux is not installed, and COTAL_REQUIRE_TMUX asks for the dashboard tests")
		}
		t.Skip("tmux is not installed: the dashboard tests drive it")
	}
	tc := startPane(t, home, dir, w, h, extra, args...)
	// A hosting dashboard left behind is stopped with its seats while its
	// terminal is still there: this cleanup runs before the pane's, whose
	// hangup would leave a dashboard with live seats running headless.
	downOnCleanup(t, home, append(args, "--with-agents"))
	return tc
}

// startClient runs the dashboard from dir as a client of a mesh the test
// started (and stops) itself.
func startClient(t *testing.T, home, dir string, w, h int, args ...string) *tmuxCotal {
	t.Helper()
	return startPane(t, home, dir, w, h, nil, args...)
}

// startPane runs cotal with args from dir in a w x h tmux pane, with the
// extra KEY=VALUE pairs in its environment.
func startPane(t *testing.T, home, dir string, w, h int, extra []string, args ...string) *tmuxCotal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("COTAL_REQUIRE_TMUX") != "" {
			t.Fatal("tmux is not installed, and COTAL_REQUIRE_TMUX asks for the dashboard tests")
		}
		t.Skip("tmux is not installed: the dashboard tests drive it")
	}
	var env []string
	for _, kv := range cotalEnv(home) {
		if k, _, _ := strings.Cut(kv, "="); k == "COTAL_HOME" || k == "HOME" || k == "PATH" {
			env = append(env, shellQuote(kv))
		}
	}
	for _, kv := range extra {
		env = append(env, shellQuote(kv))
	}
	cmdline := []string{shellQuote(cotalBin)}
	for _, a := range args {
		cmdline = append(cmdline, shellQuote(a))
	}
	script := fmt.Sprintf("env %s %s; echo EXIT=$?; sleep 600", strings.Join(env, " "), strings.Join(cmdline, " "))
	return newTmux(t, dir, w, h, script)
}

// tmuxTimeout bounds one tmux command. tmux answers from memory; a
// command that takes longer is talking to a server that cannot answer
// (stopped, or gone mad), and waiting on would hang the test.
const tmuxTimeout = 10 * time.Second

// newTmux starts a private tmux server whose one session, "dash", runs
// script in a w x h window from dir. Its cleanup is registered before
// anything can fail: it continues the server (a test may have stopped
// it), shows the last screen of a failed test, and ends the server,
// killing it when it does not go.
func newTmux(t *testing.T, dir string, w, h int, script string) *tmuxCotal {
	t.Helper()
	tc := &tmuxCotal{t: t, socket: fmt.Sprintf("cotal-e2e-%d-%d", os.Getpid(), tmuxSeq.Add(1))}
	t.Cleanup(tc.end)
	tc.tmux("-f", "/dev/null", "new-session", "-d", "-s", "dash", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-c", dir, "sh", "-c", script)
	if pid, err := pidOf(tc.tmux("display-message", "-p", "#{pid}")); err == nil {
		tc.server = pid
	}
	return tc
}

// end stops the tmux server, however the test left it.
func (tc *tmuxCotal) end() {
	if tc.server > 0 {
		_ = syscall.Kill(tc.server, syscall.SIGCONT)
	}
	if tc.t.Failed() {
		tc.t.Logf("last screen:\n%s", tc.screen())
	}
	ctx, cancel := context.WithTimeout(context.Background(), tmuxTimeout)
	defer cancel()
	_ = exec.CommandContext(ctx, "tmux", "-L", tc.socket, "kill-server").Run()
	if tc.server > 0 {
		_ = syscall.Kill(tc.server, syscall.SIGKILL) // gone already, or deaf
	}
}

// stopServer stops the tmux server (SIGSTOP): its clients' terminals stop
// reading. The cleanup that continues it is registered first, so a failed
// test never leaves it stopped; resume continues it earlier.
func (tc *tmuxCotal) stopServer() (resume func()) {
	tc.t.Helper()
	if tc.server <= 0 {
		tc.t.Fatal("the tmux server's pid is unknown")
	}
	resume = func() { _ = syscall.Kill(tc.server, syscall.SIGCONT) }
	tc.t.Cleanup(resume)
	if err := syscall.Kill(tc.server, syscall.SIGSTOP); err != nil {
		tc.t.Fatal(err)
	}
	return resume
}

// tmux runs one tmux command on this server, failing the test when it
// fails or does not answer within tmuxTimeout.
func (tc *tmuxCotal) tmux(args ...string) string {
	tc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), tmuxTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tmux", append([]string{"-L", tc.socket}, args...)...).CombinedOutput()
	if err != nil {
		tc.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (tc *tmuxCotal) screen() string {
	ctx, cancel := context.WithTimeout(context.Background(), tmuxTimeout)
	defer cancel()
	out, _ := exec.CommandContext(ctx, "tmux", "-L", tc.socket, "capture-pane", "-p", "-t", "dash").CombinedOutput()
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

// waitLine polls until one screen line matches re.
func (tc *tmuxCotal) waitLine(re string) {
	tc.t.Helper()
	rx := regexp.MustCompile(re)
	waitFor(tc.t, screenWait, func() error {
		s := tc.screen()
		for _, l := range strings.Split(s, "\n") {
			if rx.MatchString(l) {
				return nil
			}
		}
		return fmt.Errorf("no screen line matches %q:\n%s", re, s)
	})
}

// waitGoneFromScreen polls until s is no longer on the screen.
func (tc *tmuxCotal) waitGoneFromScreen(s string) {
	tc.t.Helper()
	waitFor(tc.t, screenWait, func() error {
		if scr := tc.screen(); strings.Contains(scr, s) {
			return fmt.Errorf("screen still shows %q:\n%s", s, scr)
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
	d.waitScreen("→ #general: stored seq", "#general "+operator()+": hi from the dashboard")
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

// seatPID is the pid ps reports for a running seat.
func seatPID(t *testing.T, home, space, name string) int {
	t.Helper()
	var ps client.Census
	out := mustCotal(t, home, "ps", "--json", "--space", space)
	if err := json.Unmarshal([]byte(out), &ps); err != nil {
		t.Fatalf("ps --json: %v\n%s", err, out)
	}
	for _, r := range ps.Rows {
		if r.Name == name && r.Running() {
			return r.PID
		}
	}
	t.Fatalf("ps shows no running seat %s:\n%s", name, out)
	return 0
}

// processAlive reports whether pid is a live process (a zombie is not).
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

func TestDashboardSpawnsTypesIntoStopsSeatsAndAsksBeforeQuitting(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, shellPersona)
	const space = "seats"
	d := startDashboardIn(t, home, dir, "--space", space)
	d.waitScreen("HOSTING", "mesh "+space+" runs in this process", "SEATS · 0", "no seats · s spawns one")

	// Spawn a seat from the persona picker.
	d.keys("s")
	d.waitScreen("SPAWN A SEAT", "› shell")
	d.keys("Enter")
	d.waitScreen("shell is up and on the mesh")
	d.waitLine(`^● ›shell +running +\S+ +\d+ +idle`)

	// Type a line into it and read the answer on its screen.
	d.keys("i")
	d.waitScreen("type into shell>")
	d.typeText("echo dash-$((6*7))")
	d.keys("Enter")
	d.waitLine(`→ sent \d+ bytes to shell`)
	d.waitLine(`│dash-42 *$`)

	// Stop it: the question names it, and the row goes offline.
	d.keys("x")
	d.waitScreen("stop seat shell? (y) / cancel (n)", "STOP SEAT shell?")
	d.keys("y")
	d.waitLine(`stopped shell \((exited|killed) .*\); it is offline`)
	d.waitLine(`^⨯ ›shell +(exited|killed) .* offline`)

	// Spawn it again (an exited seat's name is free); quitting asks and
	// names it; n keeps everything running.
	d.keys("s")
	d.waitScreen("SPAWN A SEAT")
	d.keys("Enter")
	d.waitScreen("shell is up and on the mesh")
	d.waitLine(`^● ›shell +running`)
	pid := seatPID(t, home, space, "shell")
	d.keys("q")
	d.waitScreen("1 seat still running: shell — stop it and quit? (y) / cancel (n)")
	d.keys("n")
	d.waitGoneFromScreen("stop it and quit?")
	if _, code := statusJSON(t, home, "--space", space); code != 0 || !processAlive(pid) {
		t.Fatalf("after answering n: status exit %d (want 0), seat pid %d alive %v (want true)", code, pid, processAlive(pid))
	}

	// q and y: the seat and the mesh stop, and the dashboard exits.
	d.keys("q")
	d.waitScreen("stop it and quit?")
	d.keys("y")
	d.waitScreen("mesh "+space+" stopped", "EXIT=0")
	if _, code := statusJSON(t, home, "--space", space); code != 1 {
		t.Errorf("status after quitting with y: exit %d, want 1 (mesh stopped)", code)
	}
	waitFor(t, 5*time.Second, func() error {
		if processAlive(pid) {
			return fmt.Errorf("the seat's sh (pid %d) survived the dashboard", pid)
		}
		return nil
	})
}

// TestDashboardTerminalClosedKeepsSeats: closing the terminal of a
// dashboard that hosts the mesh while a seat runs ends the dashboard only;
// the mesh and the seat run on, bare down refuses and names the seat, and
// down --with-agents stops both. A seat is never killed by a closed window.
func TestDashboardTerminalClosedKeepsSeats(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, shellPersona)
	const space = "hangup"
	d := startDashboardIn(t, home, dir, "--space", space)
	d.waitScreen("HOSTING", "SEATS · 0")
	d.keys("s")
	d.waitScreen("SPAWN A SEAT", "› shell")
	d.keys("Enter")
	d.waitScreen("shell is up and on the mesh")
	seat := seatPID(t, home, space, "shell")
	store := filepath.Join(home, "spaces", space)
	dashboard := readBrokerJSON(t, store).PID

	d.tmux("kill-server") // the terminal closes: the dashboard is hung up
	waitFor(t, screenWait, func() error {
		b, _ := os.ReadFile(filepath.Join(store, "mesh.log"))
		if !strings.Contains(string(b), "the terminal closed with 1 seat(s) running (shell); mesh "+space+" stays up") {
			return fmt.Errorf("mesh.log says nothing of the closed terminal:\n%s", b)
		}
		return nil
	})
	if s, code := statusJSON(t, home, "--space", space); code != 0 || s.PID != dashboard {
		t.Fatalf("status after the terminal closed: exit %d, pid %d; want the mesh up in the dashboard's process %d", code, s.PID, dashboard)
	}
	if got := seatPID(t, home, space, "shell"); got != seat || !processAlive(seat) {
		t.Fatalf("seat shell: pid %d in ps (was %d), alive %v", got, seat, processAlive(seat))
	}

	_, stderr, code := runCotal(t, home, "--space", space, "down")
	if code != 1 || !strings.Contains(stderr, "1 seat(s) still running: shell") {
		t.Fatalf("bare down with a seat running: exit %d, stderr %q; want exit 1 naming shell", code, stderr)
	}
	mustCotal(t, home, "--space", space, "down", "--with-agents")
	waitFor(t, screenWait, func() error {
		if processAlive(seat) || processAlive(dashboard) {
			return fmt.Errorf("after down --with-agents: seat alive %v, dashboard process alive %v", processAlive(seat), processAlive(dashboard))
		}
		return nil
	})
}
