package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// custodyRow is the part of a `cotal ps --json` row the custody tests read.
type custodyRow struct {
	Name            string `json:"name"`
	LifecycleUID    string `json:"lifecycleUid"`
	PID             int    `json:"pid"`
	Process         string `json:"process"`
	State           string `json:"state"`
	Custody         string `json:"custody"`
	ReattachedMs    int64  `json:"reattachedMs"`
	DetachedKept    int64  `json:"detachedKept"`
	DetachedDropped int64  `json:"detachedDropped"`
	LostMs          int64  `json:"lostMs"`
	Lost            string `json:"lost"`
	Sessions        []struct {
		Live bool `json:"live"`
	} `json:"sessions"`
}

func custodyRows(t *testing.T, home, dir string) map[string]custodyRow {
	t.Helper()
	out, stderr, code := runIn(t, home, dir, "ps", "--json")
	if code != 0 {
		t.Fatalf("ps --json: exit %d: %s", code, stderr)
	}
	var cs struct {
		Rows []custodyRow `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		t.Fatalf("ps --json: %v\n%s", err, out)
	}
	rows := map[string]custodyRow{}
	for _, r := range cs.Rows {
		rows[r.Name] = r
	}
	return rows
}

// upIn runs `cotal up --detach` in dir and returns what it printed and
// the mesh's pid.
func upIn(t *testing.T, home, dir string) (string, int) {
	t.Helper()
	out, stderr, code := runIn(t, home, dir, "up", "--detach")
	if code != 0 {
		t.Fatalf("up: exit %d\n%s%s", code, out, stderr)
	}
	m := upLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("up printed no `mesh <space> up on <url> (pid N, ...` line:\n%s", out)
	}
	pid, _ := strconv.Atoi(m[3])
	return out, pid
}

// TestKillNineLeavesSeatsToTheNextUp: kill -9 of the mesh with three
// seats (one attached, one in the middle of a flood, one injected into)
// leaves all three running in their keepers; the next up takes them back
// under the same lifecycle uids and processes, their screens as they drew
// them (the flood's end included), the attached client reconnects, and a
// DM sent after the restart is typed in.
func TestKillNineLeavesSeatsToTheNextUp(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{
		"att":   "agent: command\ncommand: sh",
		"flood": "agent: command\ncommand: sh",
		"inj":   "agent: command\ncommand: sh\ninject: true",
	})
	_, pid := upIn(t, home, dir)
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	for _, s := range []string{"att", "flood", "inj"} {
		if out, stderr, code := runIn(t, home, dir, "spawn", s); code != 0 {
			t.Fatalf("spawn %s: exit %d\n%s%s", s, code, out, stderr)
		}
	}
	tc := startTerm(t, home, dir, 100, 30, "")
	tc.waitScreen("outer$")
	tc.enter(cotalIn("attach", "att"))
	tc.enter("echo before-$((6*7))")
	tc.waitLine(`^before-42\s*$`)
	if _, stderr, code := runIn(t, home, dir, "input", "inj", "echo inj-before-$((2+3))"); code != 0 {
		t.Fatalf("input inj: %s", stderr)
	}
	waitSeatScreen(t, home, dir, "inj", "inj-before-5", func(s string) bool { return hasLine(s, "inj-before-5") })
	// 40 MB of lines, then a mark: the kill comes while it floods.
	flood := fmt.Sprintf("yes %s | head -c 40000000; echo flood-done-$((4+4))", floodLine)
	if _, stderr, code := runIn(t, home, dir, "input", "flood", flood); code != 0 {
		t.Fatalf("input flood: %s", stderr)
	}
	waitSeatScreen(t, home, dir, "flood", "the flood under way", func(s string) bool { return hasLine(s, floodLine) })
	before := custodyRows(t, home, dir)
	for _, n := range []string{"att", "flood", "inj"} {
		if r := before[n]; r.Custody != "keeper" || r.PID == 0 {
			t.Fatalf("seat %s before the kill: %+v; want held by a keeper", n, r)
		}
	}

	killMesh(t, pid)
	for n, r := range before {
		if !processAlive(r.PID) {
			t.Errorf("seat %s (pid %d) died with the mesh", n, r.PID)
		}
	}
	out, newPID := upIn(t, home, dir)
	if !strings.Contains(out, "took back 3 seat(s) from their keepers: att, flood, inj\n") {
		t.Errorf("up after the kill does not say it took the seats back:\n%s", out)
	}
	after := custodyRows(t, home, dir)
	for _, n := range []string{"att", "flood", "inj"} {
		b, a := before[n], after[n]
		if a.LifecycleUID != b.LifecycleUID || a.PID != b.PID || a.Process != "running" || a.ReattachedMs == 0 {
			t.Errorf("seat %s after up: %+v; want running, reattached, uid %s pid %d", n, a, b.LifecycleUID, b.PID)
		}
	}
	ps, _, _ := runIn(t, home, dir, "ps")
	if !regexp.MustCompile(`(?m)^att: reattached \d+\S* ago, taken back from its keeper`).MatchString(ps) {
		t.Errorf("ps does not say att was reattached:\n%s", ps)
	}

	// The flood went on while no mesh ran, and its end is on the screen.
	waitSeatScreen(t, home, dir, "flood", "flood-done-8", func(s string) bool { return strings.Contains(s, "flood-done-8") })
	if s := seatScreen(t, home, dir, "inj"); !hasLine(s, "inj-before-5") {
		t.Errorf("inj's screen lost what it drew before the kill:\n%s", s)
	}
	// The attached client reconnects to the seat as it is: once the new
	// manager serves its session (keys typed before that, while the
	// client has not yet seen the old connection go, are dropped, as a
	// terminal's keys are while it reconnects), what it types arrives.
	waitFor(t, 20*time.Second, func() error {
		if r := custodyRows(t, home, dir)["att"]; len(r.Sessions) == 0 || !r.Sessions[0].Live {
			return fmt.Errorf("the new manager serves no session on att: %+v", r.Sessions)
		}
		return nil
	})
	tc.enter("echo after-$((7*8))")
	tc.waitLine(`^after-56\s*$`)
	if !strings.Contains(tc.screen(), "before-42") {
		t.Errorf("the reconnected client lost the screen drawn before the kill:\n%s", tc.screen())
	}
	// A DM sent to the new mesh is typed into the seat taken back.
	if _, stderr, code := runIn(t, home, dir, "send", "dm", "inj", "dm-after-the-kill"); code != 0 {
		t.Fatalf("send dm: %s", stderr)
	}
	waitSeatScreen(t, home, dir, "inj", "the DM typed in", func(s string) bool { return strings.Contains(s, "dm-after-the-kill") })
	if newPID == pid {
		t.Errorf("the new mesh reports the dead pid %d", pid)
	}
}

// keeperPID is the pid of the keeper holding a seat of space "seats", from
// its record.
func keeperPID(t *testing.T, home, name, uid string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "spaces", "seats", "run", "keep", name+"-"+uid, "keeper.json"))
	if err != nil {
		t.Fatalf("the keeper record of %s: %v", name, err)
	}
	var rec struct {
		Keeper struct {
			PID int `json:"pid"`
		} `json:"keeper"`
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.Keeper.PID == 0 {
		t.Fatalf("keeper.json of %s: %v\n%s", name, err, b)
	}
	return rec.Keeper.PID
}

// TestDownKeepSeatsAndLostSeats: bare down refuses while seats run and
// names them; down --keep-seats stops the mesh and leaves them running;
// the next up takes back the one whose keeper lives and says which was
// lost (its keeper killed while no mesh ran) and when, in its output and
// in ps; the lost seat's process and its background job are ended, and
// so is the background job of the seat taken back when it is stopped.
func TestDownKeepSeatsAndLostSeats(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{
		"stay": "agent: command\ncommand: sh",
		"gone": "agent: command\ncommand: sh\nargs: [\"-c\", \"trap '' HUP; sleep 1000 & echo job=$!; while :; do sleep 1; done\"]",
	})
	upIn(t, home, dir)
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	for _, s := range []string{"stay", "gone"} {
		if out, stderr, code := runIn(t, home, dir, "spawn", s); code != 0 {
			t.Fatalf("spawn %s: exit %d\n%s%s", s, code, out, stderr)
		}
	}
	if _, stderr, code := runIn(t, home, dir, "input", "stay", "echo stay-$((2*21))"); code != 0 {
		t.Fatalf("input: %s", stderr)
	}
	waitSeatScreen(t, home, dir, "stay", "stay-42", func(s string) bool { return hasLine(s, "stay-42") })
	job := 0
	waitSeatScreen(t, home, dir, "gone", "its job's pid", func(s string) bool {
		m := regexp.MustCompile(`job=(\d+)`).FindStringSubmatch(s)
		if m != nil {
			job, _ = strconv.Atoi(m[1])
		}
		return m != nil
	})
	before := custodyRows(t, home, dir)

	_, stderr, code := runIn(t, home, dir, "down")
	if code == 0 || !strings.Contains(stderr, "2 seat(s) still running: gone, stay") || !strings.Contains(stderr, "cotal down --keep-seats") {
		t.Fatalf("bare down with live seats: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runIn(t, home, dir, "down", "--keep-seats", "--with-agents"); code != 2 {
		t.Errorf("down --keep-seats --with-agents: exit %d, want 2 (usage)\n%s", code, stderr)
	}
	out, stderr, code := runIn(t, home, dir, "down", "--keep-seats")
	if code != 0 || !strings.Contains(out, "2 seat(s) run on in their keepers for the next up: gone, stay") {
		t.Fatalf("down --keep-seats: exit %d\n%s%s", code, out, stderr)
	}
	for n, r := range before {
		if !processAlive(r.PID) {
			t.Errorf("seat %s (pid %d) did not outlive down --keep-seats", n, r.PID)
		}
	}
	keeper := keeperPID(t, home, "gone", before["gone"].LifecycleUID)
	killed := time.Now()
	if err := syscall.Kill(keeper, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, keeper)

	out, _ = upIn(t, home, dir)
	if !strings.Contains(out, "took back 1 seat(s) from their keepers: stay\n") {
		t.Errorf("up does not say it took stay back:\n%s", out)
	}
	lostLine := regexp.MustCompile(`(?m)^seat gone was lost \((\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\): its keeper \(pid \d+, start \d+\) died; last seen alive `)
	m := lostLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("up does not say gone was lost, and when:\n%s", out)
	}
	if at, err := time.ParseInLocation("2006-01-02 15:04:05", m[1], time.Local); err != nil || at.After(killed) {
		t.Errorf("gone lost at %s (%v); want when its keeper was last seen, before the kill at %s", m[1], err, killed.Format(time.TimeOnly))
	}
	after := custodyRows(t, home, dir)
	if r := after["stay"]; r.LifecycleUID != before["stay"].LifecycleUID || r.PID != before["stay"].PID || r.ReattachedMs == 0 {
		t.Errorf("stay after up: %+v; want reattached, same uid and pid", r)
	}
	if r := after["gone"]; r.Process != "lost" || r.LostMs == 0 || r.LostMs > killed.UnixMilli() || !strings.Contains(r.Lost, "died") {
		t.Errorf("gone after up: %+v; want lost, before the kill", r)
	}
	ps, _, _ := runIn(t, home, dir, "ps")
	if !regexp.MustCompile(`(?m)^gone: lost \S+ ago: its keeper`).MatchString(ps) {
		t.Errorf("ps does not say gone was lost:\n%s", ps)
	}
	waitFor(t, 10*time.Second, func() error {
		if processAlive(before["gone"].PID) || processAlive(job) {
			return fmt.Errorf("the lost seat (pid %d) or its job (pid %d) still runs", before["gone"].PID, job)
		}
		return nil
	})
	if _, stderr, code := runIn(t, home, dir, "input", "stay", "echo back-$((3*3))"); code != 0 {
		t.Fatalf("input after up: %s", stderr)
	}
	waitSeatScreen(t, home, dir, "stay", "back-9", func(s string) bool { return hasLine(s, "back-9") })

	// A stop of the seat taken back ends its background job with it.
	if _, stderr, code := runIn(t, home, dir, "input", "stay", "sleep 1000 & echo bg=$!"); code != 0 {
		t.Fatalf("input: %s", stderr)
	}
	bg := 0
	waitSeatScreen(t, home, dir, "stay", "its job's pid", func(s string) bool {
		m := regexp.MustCompile(`(?m)^bg=(\d+)`).FindStringSubmatch(s)
		if m != nil {
			bg, _ = strconv.Atoi(m[1])
		}
		return m != nil
	})
	if out, stderr, code := runIn(t, home, dir, "stop", "stay"); code != 0 {
		t.Fatalf("stop stay: exit %d\n%s%s", code, out, stderr)
	}
	waitFor(t, 10*time.Second, func() error {
		if processAlive(before["stay"].PID) || processAlive(bg) {
			return fmt.Errorf("the stopped seat (pid %d) or its background job (pid %d) still runs", before["stay"].PID, bg)
		}
		return nil
	})
}

// TestKilledSuperviseLeavesItsSeatsToTheNext: kill -9 of a `cotal
// supervise` manager leaves its seat running in its keeper; the next
// supervise of the same instance takes it back, same lifecycle and
// process, typed into as before.
func TestKilledSuperviseLeavesItsSeatsToTheNext(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{"shell": "agent: command\ncommand: sh"})
	upIn(t, home, dir)
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	idFile := filepath.Join(t.TempDir(), "sup.id")
	cmd, _, done := foreground(t, home, dir, "Ctrl-C to stop", "supervise", "--id-file", idFile)
	b, err := os.ReadFile(idFile)
	if err != nil {
		t.Fatal(err)
	}
	var id struct {
		InstanceID string `json:"instanceId"`
	}
	if err := json.Unmarshal(b, &id); err != nil {
		t.Fatal(err)
	}
	spawnShell(t, home, dir, id.InstanceID)
	before := custodyRows(t, home, dir)["shell"]
	if before.Custody != "keeper" {
		t.Fatalf("the supervised seat: %+v; want held by a keeper", before)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	if !processAlive(before.PID) {
		t.Fatalf("the seat (pid %d) died with its supervise", before.PID)
	}
	_, out, _ := foreground(t, home, dir, "Ctrl-C to stop", "supervise", "--id-file", idFile)
	if !strings.Contains(out.String(), "took back 1 seat(s) from their keepers: shell") {
		t.Errorf("the next supervise does not say it took the seat back:\n%s", out)
	}
	var after custodyRow
	waitFor(t, 20*time.Second, func() error {
		after = custodyRows(t, home, dir)["shell"]
		if after.ReattachedMs == 0 || after.Process != "running" {
			return fmt.Errorf("shell %+v; want reattached", after)
		}
		return nil
	})
	if after.LifecycleUID != before.LifecycleUID || after.PID != before.PID {
		t.Errorf("shell after the next supervise: %+v; want uid %s pid %d", after, before.LifecycleUID, before.PID)
	}
	if _, stderr, code := runIn(t, home, dir, "input", "shell", "echo sup-$((5*5))"); code != 0 {
		t.Fatalf("input: %s", stderr)
	}
	waitSeatScreen(t, home, dir, "shell", "sup-25", func(s string) bool { return hasLine(s, "sup-25") })
}
