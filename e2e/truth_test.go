package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh/presence"
)

// The tests here check that what a person reads is true: the sender of a
// retained post, the age of a peer's last heartbeat.

// TestHistoryNamesTheSender: `cotal history` says who posted each line,
// for the operator (reading storage) and for an agent (through the
// delivery endpoint). It printed `[#team /reviewer]`.
func TestHistoryNamesTheSender(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	alice := mint(t, home, "alice", "--role", "reviewer", "--subscribe", "team", "--allow-publish", "team")
	mustCotal(t, home, "--creds", alice.Creds, "send", "msg", "team", "looks good")
	for _, who := range [][]string{nil, {"--creds", alice.Creds}} {
		out := mustCotal(t, home, append(who, "history", "team")...)
		if !strings.Contains(out, "[#team alice/reviewer] looks good") {
			t.Errorf("history %v does not name the sender:\n%s", who, out)
		}
	}
}

// TestRosterHeardIsTheLastRecordsAge: `cotal roster` gives the age of a
// peer's last record, not the time it read the bucket (it said `0s ago`
// of everyone). A seat that stopped wrote its last record; while the
// bucket keeps it, its age grows.
func TestRosterHeardIsTheLastRecordsAge(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, shellPersona, "shell")
	if _, stderr, code := runIn(t, home, dir, "stop", "shell"); code != 0 {
		t.Fatalf("stop shell: %s", stderr)
	}
	// The offline record stays for the bucket's TTL; within it, its age
	// passes a second (a read time is always younger than that).
	waitFor(t, presence.TTL, func() error {
		out, stderr, code := runIn(t, home, dir, "roster", "--json")
		if code != 0 {
			return fmt.Errorf("roster --json: exit %d: %s", code, stderr)
		}
		var r struct {
			Peers []struct {
				Name     string  `json:"name"`
				Status   string  `json:"status"`
				HeardAge float64 `json:"heardAgeSeconds"`
			} `json:"peers"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			return fmt.Errorf("roster --json: %v\n%s", err, out)
		}
		for _, p := range r.Peers {
			if p.Name == "shell" && p.Status == "offline" && p.HeardAge >= 1 {
				return nil
			}
		}
		return fmt.Errorf("no offline shell heard a second or more ago:\n%s", out)
	})
}

// heardOf reads the HEARD column of name's roster row from a dashboard
// screen, in seconds; ok is false while the row is not shown.
func heardOf(screen, name string) (secs int, ok bool) {
	row := regexp.MustCompile(`^.{2}›?` + regexp.QuoteMeta(name) + `\s.*\s(\d+)([smhd])\s*$`)
	for _, l := range strings.Split(screen, "\n") {
		left, _, _ := strings.Cut(l, "│")
		m := row.FindStringSubmatch(strings.TrimRight(left, " "))
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		switch m[2] {
		case "m":
			n *= 60
		case "h":
			n *= 3600
		case "d":
			n *= 86400
		}
		return n, true
	}
	return 0, false
}

// TestDashboardHeardIsLive: the dashboard's HEARD column is the age of the
// seat's last heartbeat, repainted as heartbeats come: it never passes
// the liveness window for a seat heartbeating every presence.Heartbeat.
// It grew 9 s, 19 s, ... minutes, since a heartbeat that changes nothing
// else did not repaint the roster.
func TestDashboardHeardIsLive(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, shellPersona, "shell")
	d := startClient(t, home, dir, 140, 40, "--space", "seats")
	var first time.Time
	waitFor(t, screenWait, func() error {
		if _, ok := heardOf(d.screen(), "shell"); !ok {
			return fmt.Errorf("no roster row for shell:\n%s", d.screen())
		}
		first = time.Now()
		return nil
	})
	// Watch for two liveness windows: a HEARD that is not repainted
	// passes presence.TTL within the first.
	window := 2 * presence.TTL
	worst := 0
	waitFor(t, window+screenWait, func() error {
		s := d.screen()
		if n, ok := heardOf(s, "shell"); ok && n > worst {
			worst = n
		}
		if worst >= int(presence.TTL.Seconds()) {
			t.Fatalf("HEARD of a heartbeating seat reached %ds:\n%s", worst, s)
		}
		if time.Since(first) < window {
			return fmt.Errorf("watching")
		}
		return nil
	})
	t.Logf("the oldest HEARD seen over %s: %ds", window, worst)
}

// TestDownStopsAHostingDashboard: `cotal down --with-agents` stops a mesh
// hosted by a dashboard right after that dashboard spawned a seat. The
// dashboard's program caught the same SIGTERM as its quit signal and,
// losing the race, never returned: down waited out its timeout and the
// mesh stayed.
func TestDownStopsAHostingDashboard(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, shellPersona)
	for round := range 3 { // the race was lost about two times in three
		d := startDashboardIn(t, home, dir, "--space", "seats")
		d.waitScreen("HOSTING", "SEATS · 0")
		d.keys("s")
		d.waitScreen("SPAWN A SEAT", "› shell")
		d.keys("Enter")
		d.waitScreen("shell is up and on the mesh")
		if out, stderr, code := runIn(t, home, dir, "down", "--with-agents"); code != 0 {
			t.Fatalf("round %d: down --with-agents: exit %d\n%s%s", round, code, out, stderr)
		}
		d.waitScreen("mesh seats stopped", "EXIT=0")
	}
}

// TestSendTyposWarn: a send that succeeds but likely went nowhere (a post
// to a channel never registered or used, a task for a role nobody ever
// held) still succeeds, with one warning line naming the close names.
func TestSendTyposWarn(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	mustCotal(t, home, "channels", "set", "team", "--replay", "on")
	mint(t, home, "rev", "--role", "reviewer")
	for _, tc := range []struct {
		args []string
		warn string
	}{
		{[]string{"send", "msg", "team", "hi"}, ""},
		{[]string{"send", "msg", "tema", "hi"}, "warning: #tema was never registered or posted to before: nobody may be reading it; did you mean #team?\n"},
		{[]string{"send", "msg", "tema", "again"}, ""}, // used now
		{[]string{"send", "ask", "reviewr", "x"}, "warning: no peer holds or ever held role @reviewr: the task waits until one does; did you mean @reviewer?\n"},
		{[]string{"send", "ask", "nosuchrole", "x"}, "warning: no peer holds or ever held role @nosuchrole: the task waits until one does (roles here: reviewer)\n"},
		{[]string{"send", "ask", "reviewer", "x"}, ""},
	} {
		stdout, stderr, code := runCotal(t, home, tc.args...)
		if code != 0 || stderr != tc.warn || !strings.Contains(stdout, "stored seq") {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q\nwant exit 0, stored, and stderr %q", tc.args, code, stdout, stderr, tc.warn)
		}
	}
}

// TestASuspendedSeatIsSaidStopped: a seat whose process is stopped by a
// signal (SIGSTOP) is `stopped (signal)` in ps, in the dashboard's SEATS
// list and in NEEDS YOU, and is running again once continued. ps said
// `running`.
func TestASuspendedSeatIsSaidStopped(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, shellPersona, "shell")
	d := startClient(t, home, dir, 140, 40, "--space", "seats")
	d.waitLine(`● ›?shell +running`)
	pid := seatPID(t, home, "seats", "shell")
	resume := func() { _ = syscall.Kill(pid, syscall.SIGCONT) }
	t.Cleanup(resume) // before the stop: a failed test never leaves it stopped
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	d.waitLine(`⏸ ›?shell +suspended `)
	d.waitLine(`⏸ shell +stopped \S+ +kill -CONT ` + strconv.Itoa(pid) + ` resumes`)
	out, _, _ := runIn(t, home, dir, "ps")
	if !regexp.MustCompile(`(?m)^shell +stopped \(signal\) `).MatchString(out) ||
		!strings.Contains(out, "shell is stopped by a signal (SIGSTOP or ^Z), for ") {
		t.Errorf("ps of a stopped seat:\n%s", out)
	}
	resume()
	d.waitLine(`● ›?shell +running`)
	d.waitGoneFromScreen("kill -CONT")
}

// TestAClientDashboardFollowsTheMeshThroughARestart: a client dashboard
// whose mesh stops and starts again (on another port) follows it there
// through broker.json: the header names the new pid and URL, the view is
// current, and a post made after the restart shows in its feed. It stayed
// VIEW STALE on the old port and named a dead pid.
func TestAClientDashboardFollowsTheMeshThroughARestart(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	url1, pid1 := upDetached(t, home)
	d := startClient(t, home, fakeHome, 140, 40)
	d.waitScreen("CLIENT", fmt.Sprintf("(pid %d)", pid1), url1)
	mustCotal(t, home, "down")
	url2, pid2 := upDetached(t, home)
	if url2 == url1 {
		t.Logf("the mesh came back on the same URL %s", url2) // still a restart: a new pid
	}
	d.waitScreen(fmt.Sprintf("(pid %d)", pid2), url2)
	d.waitGoneFromScreen("DISCONNECTED")
	mustCotal(t, home, "send", "msg", "team", "after the restart")
	d.waitLine(`#team \S+: after the restart`)
	d.waitGoneFromScreen("VIEW STALE")
	d.keys("q")
	d.waitScreen(fmt.Sprintf("mesh default is still running (pid %d)", pid2))
}

// TestTwoTerminalsOfDifferentSizesFollowOneRule: two terminals attached
// to one seat, 100x30 and 140x40. The seat takes the smallest (tmux's
// rule), so both show all of it; the larger draws the rest blank and says
// why under the seat's screen, and each terminal's title names the seat's
// size and how many are attached. When the small one leaves, the seat
// grows to the other. Only the last-resized drew correctly, and neither
// person was told.
func TestTwoTerminalsOfDifferentSizesFollowOneRule(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, shellPersona, "shell")
	small := startTerm(t, home, dir, 100, 30, cotalIn("attach", "shell"))
	waitSessions(t, home, dir, "shell", 1, screenWait)
	large := startTerm(t, home, dir, 140, 40, cotalIn("attach", "shell"))
	waitSessions(t, home, dir, "shell", 2, screenWait)

	large.enter("clear; stty size")
	for _, tc := range []*tmuxCotal{small, large} {
		tc.waitLine(`^30 100\s*$`)
	}
	large.waitLine(`^\[cotal: shell is 100x30, the smallest of 2 attached terminals; the rest of this one stays blank\]`)
	for _, tc := range []*tmuxCotal{small, large} {
		waitFor(t, screenWait, func() error {
			if title := tc.tmux("display-message", "-p", "-t", "dash", "#{pane_title}"); !strings.Contains(title, "cotal: shell is 100x30, the smallest of 2 attached terminals") {
				return fmt.Errorf("the title is %q", title)
			}
			return nil
		})
	}

	// A full-screen program draws right on both: each shows the seat's
	// screen, the larger one in its top-left 100x30.
	large.enter("top -d 60")
	waitSeatScreen(t, home, dir, "shell", "top", func(s string) bool { return strings.Contains(s, "load average") })
	for _, tc := range []*tmuxCotal{small, large} {
		waitFor(t, screenWait, func() error {
			want, got := trimLines(seatScreen(t, home, dir, "shell")), trimLines(clip(tc.screen(), 100, 30))
			if got != want {
				return fmt.Errorf("the terminal shows:\n%s\nthe seat's screen is:\n%s", got, want)
			}
			return nil
		})
	}
	large.keys("q")

	small.keys("C-]")
	small.waitScreen("[cotal: detached from shell")
	waitSessions(t, home, dir, "shell", 1, screenWait)
	large.enter("clear; stty size")
	large.waitLine(`^40 140\s*$`)
	waitFor(t, screenWait, func() error {
		if title := large.tmux("display-message", "-p", "-t", "dash", "#{pane_title}"); strings.TrimSpace(title) != "cotal: shell" {
			return fmt.Errorf("alone again, the title is %q", title)
		}
		return nil
	})
}

// clip is the top-left cols x rows of a screen.
func clip(screen string, cols, rows int) string {
	lines := strings.Split(screen, "\n")
	if len(lines) > rows {
		lines = lines[:rows]
	}
	for i, l := range lines {
		if r := []rune(l); len(r) > cols {
			lines[i] = string(r[:cols])
		}
	}
	return strings.Join(lines, "\n")
}
