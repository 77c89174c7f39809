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

	"github.com/cotal-go/cotal/seat/attach"
	"github.com/cotal-go/cotal/seat/client"
)

// The attach tests drive `cotal attach` in tmux as a person would, and
// check the seat through other cotal commands (screen, ps).

// startTerm opens a tmux pane of cols x rows in dir: an interactive sh
// (prompt "outer$ ") when command is "", else command in place of it, so
// the pane's pid is command's. The pane keeps what cotal printed.
func startTerm(t *testing.T, home, dir string, cols, rows int, command string) *tmuxCotal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("COTAL_REQUIRE_TMUX") != "" {
			t.Fatal("tmux is not installed, and COTAL_REQUIRE_TMUX asks for the tmux tests")
		}
		t.Skip("tmux is not installed: the attach tests drive it")
	}
	env := []string{shellQuote("PS1=outer$ ")}
	for _, kv := range cotalEnv(home) {
		if k, _, _ := strings.Cut(kv, "="); k == "COTAL_HOME" || k == "HOME" || k == "PATH" {
			env = append(env, shellQuote(kv))
		}
	}
	script := fmt.Sprintf("exec env %s sh", strings.Join(env, " "))
	if command != "" {
		script = fmt.Sprintf("exec env %s %s", strings.Join(env, " "), command)
	}
	tc := newTmux(t, dir, cols, rows, script)
	tc.tmux("set-option", "-t", "dash", "remain-on-exit", "on")
	return tc
}

// enter types a line and presses Enter.
func (tc *tmuxCotal) enter(line string) {
	tc.typeText(line)
	tc.keys("Enter")
}

// panePID is the pid of the pane's process.
func (tc *tmuxCotal) panePID() int {
	tc.t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(tc.tmux("list-panes", "-t", "dash", "-F", "#{pane_pid}")))
	if err != nil {
		tc.t.Fatal(err)
	}
	return pid
}

// stallEnds bounds the wait for a seat to end an attach session whose
// terminal stopped reading: the terminal's buffers fill at the seat's
// output rate, then the seat's stall bound (attach.DefaultStall) runs out
// with no credit, then ps says so. A second stall bound covers the fill
// on a loaded machine, a screenWait the census that reports the end.
const stallEnds = 2*attach.DefaultStall + screenWait

// cotalIn is a cotal command line for a pane, in space "seats".
func cotalIn(args ...string) string {
	line := []string{shellQuote(cotalBin), "--space", "seats"}
	for _, a := range args {
		line = append(line, shellQuote(a))
	}
	return strings.Join(line, " ")
}

// seatScreen is the seat's screen as `cotal screen` prints it.
func seatScreen(t *testing.T, home, dir, name string) string {
	t.Helper()
	out, stderr, code := runIn(t, home, dir, "screen", name)
	if code != 0 {
		t.Fatalf("screen %s: exit %d: %s", name, code, stderr)
	}
	return out
}

// waitSeatScreen waits until the seat's screen satisfies ok.
func waitSeatScreen(t *testing.T, home, dir, name, what string, ok func(string) bool) string {
	t.Helper()
	var s string
	waitFor(t, screenWait, func() error {
		if s = seatScreen(t, home, dir, name); !ok(s) {
			return fmt.Errorf("%s's screen does not show %s:\n%s", name, what, s)
		}
		return nil
	})
	return s
}

// sessionsOn are the attach sessions ps lists on the running seat name.
func sessionsOn(t *testing.T, home, dir, name string) []client.SessionRow {
	t.Helper()
	out, _, _ := runIn(t, home, dir, "ps", "--json")
	var cs client.Census
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		t.Fatalf("ps --json: %v\n%s", err, out)
	}
	for _, r := range cs.Rows {
		if r.Name == name && r.Running() {
			return r.Sessions
		}
	}
	t.Fatalf("ps shows no running seat %s:\n%s", name, out)
	return nil
}

func waitSessions(t *testing.T, home, dir, name string, n int, within time.Duration) {
	t.Helper()
	waitFor(t, within, func() error {
		if got := sessionsOn(t, home, dir, name); len(got) != n {
			return fmt.Errorf("%d sessions on %s, want %d: %+v", len(got), name, n, got)
		}
		return nil
	})
}

// hasLine reports whether a screen has a line that is exactly want,
// trailing blanks aside.
func hasLine(screen, want string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if strings.TrimRight(l, " ") == want {
			return true
		}
	}
	return false
}

// upWithShell runs a mesh for space "seats" whose project has personas,
// and spawns the seats named.
func upWithShell(t *testing.T, home string, personas map[string]string, spawn ...string) string {
	t.Helper()
	dir := project(t, personas)
	if _, stderr, code := runIn(t, home, dir, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	for _, s := range spawn {
		if out, stderr, code := runIn(t, home, dir, "spawn", s); code != 0 {
			t.Fatalf("spawn %s: exit %d\n%s%s", s, code, out, stderr)
		}
	}
	return dir
}

var shellPersona = map[string]string{"shell": "agent: command\ncommand: sh"}

// TestAttachAsAPersonWould: attach to a sh seat from a shell in tmux,
// type, leave vi with Escape, resize, detach to a working shell, attach
// again to the screen as it is.
func TestAttachAsAPersonWould(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, shellPersona, "shell")
	before := filepath.Join(t.TempDir(), "stty.before")
	tc := startTerm(t, home, dir, 100, 30, "")
	tc.waitScreen("outer$")

	tc.enter("stty -g > " + before + "; " + cotalIn("attach", "shell"))
	tc.enter("echo attached-$((6*7))")
	tc.waitLine(`^attached-42\s*$`)
	if s := sessionsOn(t, home, dir, "shell"); len(s) != 1 || !strings.HasPrefix(s[0].Holder, "local.") {
		t.Fatalf("ps lists sessions %+v, want the one attached", s)
	}

	// vi, left with Escape :q! Enter.
	tc.enter("vi")
	waitSeatScreen(t, home, dir, "shell", "vi's ~ lines", func(s string) bool { return hasLine(s, "~") })
	tc.keys("Escape")
	tc.typeText(":q!")
	tc.keys("Enter")
	waitSeatScreen(t, home, dir, "shell", "vi gone", func(s string) bool { return !hasLine(s, "~") })
	tc.enter("echo vi-gone-$((1+1))")
	tc.waitLine(`^vi-gone-2\s*$`)

	// The seat follows the window.
	tc.tmux("resize-window", "-t", "dash", "-x", "90", "-y", "25")
	tc.enter("stty size")
	tc.waitLine(`^25 90\s*$`)

	// Ctrl-] gives the shell back as it was.
	tc.keys("C-]")
	tc.waitScreen("[cotal: detached from shell; it runs on]")
	tc.enter("stty -g | cmp - " + before + " && echo restored-$((2+3))")
	tc.waitLine(`^restored-5\s*$`)
	waitSessions(t, home, dir, "shell", 0, 10*time.Second)

	// Attach again: the seat's screen as it is now.
	tc.enter("clear; " + cotalIn("attach", "shell"))
	tc.waitScreen("vi-gone-2", "25 90")
	tc.keys("C-]")
	tc.waitScreen("[cotal: detached from shell; it runs on]")
}

// TestDashboardAttachesAndComesBack: the same from inside the dashboard;
// Ctrl-] returns to it, and the i prompt's Ctrl-C only clears the prompt.
func TestDashboardAttachesAndComesBack(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, shellPersona)
	d := startDashboardIn(t, home, dir, "--space", "seats")
	d.waitScreen("HOSTING", "SEATS · 0")
	d.keys("s")
	d.waitScreen("SPAWN A SEAT", "› shell")
	d.keys("Enter")
	d.waitScreen("shell is up and on the mesh")
	d.waitLine(`^● ›shell +running`)

	d.keys("i")
	d.waitScreen("type into shell>")
	d.typeText("half a line")
	d.keys("C-c")
	d.waitGoneFromScreen("type into shell>")
	if s := d.screen(); strings.Contains(s, "stop it and quit?") || strings.Contains(s, "STOP") {
		t.Fatalf("Ctrl-C in the i prompt asked to quit:\n%s", s)
	}

	d.keys("a")
	d.waitGoneFromScreen("SEATS · 1")
	d.enter("echo in-dash-$((4*4))")
	d.waitLine(`^in-dash-16\s*$`)
	d.enter("vi")
	waitSeatScreen(t, home, dir, "shell", "vi's ~ lines", func(s string) bool { return hasLine(s, "~") })
	d.keys("Escape")
	d.typeText(":q!")
	d.keys("Enter")
	waitSeatScreen(t, home, dir, "shell", "vi gone", func(s string) bool { return !hasLine(s, "~") })
	d.enter("echo vi-gone-$((2+2))")
	d.waitLine(`^vi-gone-4\s*$`)
	d.tmux("resize-window", "-t", "dash", "-x", "110", "-y", "35")
	d.enter("stty size")
	d.waitLine(`^35 110\s*$`)

	d.keys("C-]")
	d.waitScreen("SEATS · 1", "detached from shell; it runs on")
	waitSessions(t, home, dir, "shell", 0, 10*time.Second)

	// Enter attaches again, to the screen as it is.
	d.keys("Enter")
	d.waitGoneFromScreen("SEATS · 1")
	d.waitScreen("vi-gone-4", "35 110")
	d.keys("C-]")
	d.waitScreen("SEATS · 1", "detached from shell")
	d.keys("q")
	d.waitScreen("stop it and quit?")
	d.keys("y")
	d.waitScreen("EXIT=0")
}

// TestAttachClientKilledMidOutput: SIGKILL of an attach client while the
// seat writes: the seat runs on, and the session ends within the stall
// bound (30 s) and leaves ps.
func TestAttachClientKilledMidOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the 30 s stall bound")
	}
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, map[string]string{
		"chatty": "agent: command\ncommand: sh\nargs: [\"-c\", \"while :; do echo tick $(date +%s%N); sleep 0.02; done\"]",
	}, "chatty")
	tc := startTerm(t, home, dir, 80, 24, cotalIn("attach", "chatty"))
	tc.waitScreen("tick")
	waitSessions(t, home, dir, "chatty", 1, 10*time.Second)

	if err := syscall.Kill(tc.panePID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	waitSessions(t, home, dir, "chatty", 0, stallEnds)
	t.Logf("the session ended %s after its client was killed", time.Since(killed).Round(100*time.Millisecond))
	first := seatScreen(t, home, dir, "chatty")
	waitSeatScreen(t, home, dir, "chatty", "new output", func(s string) bool { return s != first })
}

// floodLine is 79 characters, a line short of an 80-column seat's width.
var floodLine = strings.Repeat("0", 78)

// floodBytes is what one flood writes, the 200 MB: a few seconds
// in a seat, long enough to stall the client in the middle.
const floodBytes = 200_000_000

func floodCommand(mark string) string {
	return fmt.Sprintf("s=$(date +%%s%%N); yes %s | head -c %d; e=$(date +%%s%%N); echo %s $(( (e-s)/1000000 ))ms", floodLine, floodBytes, mark)
}

// floodMs waits for the flood marked mark to end and reads how long it
// took in the seat.
func floodMs(t *testing.T, home, dir, mark string) int {
	t.Helper()
	re := regexp.MustCompile(mark + ` (\d+)ms`)
	var ms int
	waitFor(t, 3*time.Minute, func() error {
		m := re.FindStringSubmatch(seatScreen(t, home, dir, "shell"))
		if m == nil {
			return fmt.Errorf("%s not done", mark)
		}
		ms, _ = strconv.Atoi(m[1])
		return nil
	})
	return ms
}

// TestFloodWhileAttached: a seat flooding output to an attached client
// whose terminal stops reading finishes its flood while the terminal is
// still stopped (the seat never waits for a session); the client then
// shows drop notices and ends on the seat's final screen. How much the
// session slows the seat is measured by the benchmarks against a baseline
// of the same run: a timed bound here failed on a loaded machine.
func TestFloodWhileAttached(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, shellPersona, "shell")
	tc := startTerm(t, home, dir, 80, 24, "")
	tc.waitScreen("outer$")
	// The seat takes the window's 80x24 for both runs.
	tc.enter(cotalIn("attach", "shell"))
	tc.enter("stty size")
	tc.waitLine(`^24 80\s*$`)
	tc.keys("C-]")
	tc.waitScreen("[cotal: detached from shell")
	waitSessions(t, home, dir, "shell", 0, 10*time.Second)

	if _, stderr, code := runIn(t, home, dir, "input", "shell", floodCommand("FLOOD-ALONE")); code != 0 {
		t.Fatalf("input: %s", stderr)
	}
	alone := floodMs(t, home, dir, "FLOOD-ALONE")

	// Everything the client writes to its terminal is kept, drop notices
	// included (the pane's own history is far too short for 20 MB).
	piped := filepath.Join(t.TempDir(), "pane.out")
	tc.tmux("pipe-pane", "-t", "dash", "-o", "cat >> "+shellQuote(piped))
	tc.enter("clear; " + cotalIn("attach", "shell"))
	waitSessions(t, home, dir, "shell", 1, 10*time.Second)
	tc.enter(floodCommand("FLOOD-ATTACHED"))
	waitSeatScreen(t, home, dir, "shell", "the flood", func(s string) bool { return strings.Contains(s, floodLine) })
	// The person's terminal stops reading (its tmux server is stopped;
	// tmux itself would resume a stopped client) until the flood is over:
	// the client falls behind, and the seat goes on without it.
	resume := tc.stopServer()
	// While the terminal is stopped, the seat drops what the session has
	// no credit for and says so in ps. Read it now: a flood that outlasts
	// the stall bound on a slow machine rightly ends the session, and the
	// client then reconnects onto the final screen.
	waitFor(t, attach.DefaultStall, func() error {
		if s := sessionsOn(t, home, dir, "shell"); len(s) != 1 || s[0].Dropped == 0 {
			return fmt.Errorf("ps sessions %+v, want one that dropped output", s)
		}
		return nil
	})
	attached := floodMs(t, home, dir, "FLOOD-ATTACHED")
	resume()
	t.Logf("%d MB flood: %d ms with nobody attached, %d ms attached to a stopped terminal (%.2fx)", floodBytes/1_000_000, alone, attached, float64(attached)/float64(alone))
	waitFor(t, stallEnds, func() error {
		b, err := os.ReadFile(piped)
		if err != nil {
			return err
		}
		// A session the stall bound ended says so instead, and reconnects.
		if !regexp.MustCompile(`(?s)\[cotal: \d+ bytes dropped - backpressure\]|\[cotal: connection lost, reconnecting\].*\[cotal: reconnected\]`).Match(b) {
			return fmt.Errorf("no drop notice in the %d bytes the client wrote", len(b))
		}
		return nil
	})
	waitFor(t, stallEnds, func() error {
		want, got := trimLines(seatScreen(t, home, dir, "shell")), trimLines(tc.screen())
		if got != want {
			return fmt.Errorf("the client shows:\n%s\nthe seat's screen is:\n%s", got, want)
		}
		return nil
	})
}

// trimLines drops trailing blanks and blank last lines.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}
