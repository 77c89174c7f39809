package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
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
	return parseResumeRows(t, out)
}

func parseResumeRows(t *testing.T, out string) map[string]resumeRow {
	t.Helper()
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
	pdir := filepath.Join(home, "spaces", "seats", "run", "control")
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

	st, _, _ := runIn(t, home, dir, "status", "--json")
	var status struct {
		Preserved *struct {
			Seats []string `json:"seats"`
			Ready bool     `json:"ready"`
		} `json:"preserved"`
	}
	if err := json.Unmarshal([]byte(st), &status); err != nil || status.Preserved == nil || !status.Preserved.Ready || strings.Join(status.Preserved.Seats, ",") != "alpha,beta" {
		t.Errorf("status --json while down does not show the ready inventory of alpha and beta (%v):\n%s", err, st)
	}
	if st, _, _ := runIn(t, home, dir, "status"); !strings.Contains(st, "preserved  2 seat(s)") {
		t.Errorf("status while down does not show the preserved seats:\n%s", st)
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
	if _, err := os.Stat(filepath.Join(pdir, "inventory.json")); !os.IsNotExist(err) {
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

// readyState reads the preserve directory of space "seats": whether a
// ready mark is there, and whether it vouches for the inventory beside it
// (its digest) and names the seat with its lifecycle.
func readyState(t *testing.T, home, seatName, uid string) (ready bool) {
	t.Helper()
	pdir := filepath.Join(home, "spaces", "seats", "run", "control")
	mark, err := os.ReadFile(filepath.Join(pdir, "ready.json"))
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	inv, err := os.ReadFile(filepath.Join(pdir, "inventory.json"))
	if err != nil {
		t.Fatalf("a ready mark without its inventory: %v\n%s", err, mark)
	}
	var m struct {
		Inventory string `json:"inventory"`
	}
	if err := json.Unmarshal(mark, &m); err != nil {
		t.Fatalf("ready.json: %v\n%s", err, mark)
	}
	sum := sha256.Sum256(inv)
	if m.Inventory != hex.EncodeToString(sum[:]) {
		t.Fatalf("the ready mark vouches for another inventory than the one there:\n%s\n%s", mark, inv)
	}
	var v struct {
		Seats []struct {
			Name string `json:"name"`
			UID  string `json:"uid"`
		} `json:"seats"`
	}
	if err := json.Unmarshal(inv, &v); err != nil || len(v.Seats) != 1 || v.Seats[0].Name != seatName || v.Seats[0].UID != uid {
		t.Fatalf("the ready inventory does not hold seat %s (%s) whole: %v\n%s", seatName, uid, err, inv)
	}
	return true
}

// TestKillNineOfPreserveLeavesReadyOrNone: `cotal down --preserve-state`
// killed with SIGKILL after a random delay, over twice the longest whole
// command seen (measured first, and on every run the kill came too late
// for), 20 times: each time the store holds a
// ready inventory whose mark vouches for it whole, or none that counts;
// the next up resumes the seat under its lifecycle exactly when it was
// ready, and otherwise has no seat left over (its name is free again).
func TestKillNineOfPreserveLeavesReadyOrNone(t *testing.T) {
	home := t.TempDir()
	dir := project(t, map[string]string{"w": "agent: command\ncommand: sh"})
	upIn(t, home, dir)
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	t.Cleanup(func() { meshLogOnFailure(t, home) })
	spawn := func() {
		t.Helper()
		if out, stderr, code := runIn(t, home, dir, "spawn", "w"); code != 0 {
			t.Fatalf("spawn w: exit %d\n%s%s", code, out, stderr)
		}
	}
	spawn()
	uidOf := func() string {
		t.Helper()
		var r resumeRow
		waitFor(t, 30*time.Second, func() error { // a resumed seat may still be starting
			if r = resumeRows(t, home, dir)["w"]; r.Process != "running" {
				return fmt.Errorf("seat w is not running: %+v", r)
			}
			return nil
		})
		return r.LifecycleUID
	}

	// The whole command, once, to know the range the kills must cover.
	start := time.Now()
	if out, stderr, code := runIn(t, home, dir, "down", "--preserve-state"); code != 0 {
		t.Fatalf("down --preserve-state: exit %d\n%s%s", code, out, stderr)
	}
	whole := time.Since(start)
	upIn(t, home, dir)
	uid := uidOf()

	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	t.Logf("a whole down --preserve-state took %s; kills over twice the longest seen, seed %d", whole, seed)
	outcome := map[string]int{}
	for run := 0; run < 20; run++ {
		delay := time.Duration(rng.Int63n(int64(whole * 2)))
		began := time.Now()
		cmd := exec.Command(cotalBin, "--space", "seats", "down", "--preserve-state")
		cmd.Env, cmd.Dir = cotalEnv(home), dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		kill := time.AfterFunc(delay, func() { _ = cmd.Process.Kill() })
		err := cmd.Wait()
		kill.Stop()
		killed := err != nil
		if !killed {
			whole = max(whole, time.Since(began))
		}
		// Settle: a bare down waits for a mesh already stopping, and
		// refuses (leaving it be) one that was never asked to stop.
		_, _, code := runIn(t, home, dir, "down")
		running := code != 0
		ready := readyState(t, home, "w", uid)
		switch {
		case running && ready:
			t.Fatalf("run %d (kill at %s): a ready inventory while the mesh still runs", run, delay)
		case running:
			outcome["mesh untouched"]++
			if got := uidOf(); got != uid {
				t.Fatalf("run %d: the mesh ran on but seat w's lifecycle changed: %s, was %s", run, got, uid)
			}
			continue
		case ready:
			outcome["ready"]++
		default:
			outcome["none"]++
		}
		if !killed && !ready {
			t.Fatalf("run %d: down --preserve-state finished before its kill at %s but left no ready inventory", run, delay)
		}
		out, _ := upIn(t, home, dir)
		r := resumeRows(t, home, dir)["w"]
		if ready {
			if r.LifecycleUID != uid || r.ResumedMs == 0 || !strings.Contains(out, "resumed 1 seat(s)") {
				t.Fatalf("run %d (kill at %s): a ready inventory, but up did not resume w under %s: %+v\n%s", run, delay, uid, r, out)
			}
			uidOf()
			continue
		}
		if r.Process == "running" || strings.Contains(out, "resumed 1 seat") {
			t.Fatalf("run %d (kill at %s): no ready inventory, yet up resumed w: %+v\n%s", run, delay, r, out)
		}
		// Nothing of the old seat holds its name.
		spawn()
		if uid = uidOf(); uid == r.LifecycleUID && r.LifecycleUID != "" {
			t.Fatalf("run %d: the new seat w took the old lifecycle %s", run, uid)
		}
	}
	t.Logf("outcomes over 20 kills: %v; the longest whole down %s", outcome, whole)
	// The kills covered the whole command: some came before its end,
	// some after (the range is twice the longest whole run seen).
	if outcome["ready"] == 0 || outcome["none"]+outcome["mesh untouched"] == 0 {
		t.Errorf("the kills did not cover the whole command: %v", outcome)
	}
}

// TestUpFreshDiscardsThePreservedSeats: up --fresh names the seats of the
// inventory it discards, resumes none of them, and their names are free.
func TestUpFreshDiscardsThePreservedSeats(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{"solo": "agent: command\ncommand: sh"})
	upIn(t, home, dir)
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	if out, stderr, code := runIn(t, home, dir, "spawn", "solo"); code != 0 {
		t.Fatalf("spawn: exit %d\n%s%s", code, out, stderr)
	}
	old := resumeRows(t, home, dir)["solo"].LifecycleUID
	out, stderr, code := runIn(t, home, dir, "down", "--preserve-state", "--json")
	if code != 0 {
		t.Fatalf("down --preserve-state --json: exit %d\n%s%s", code, out, stderr)
	}
	var res struct {
		Stopped   bool     `json:"stopped"`
		Ready     bool     `json:"ready"`
		Preserved []string `json:"preserved"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.Stopped || !res.Ready || strings.Join(res.Preserved, ",") != "solo" {
		t.Fatalf("down --preserve-state --json: %+v (%v)\n%s", res, err, out)
	}
	out, stderr, code = runIn(t, home, dir, "up", "--detach", "--fresh")
	if code != 0 {
		t.Fatalf("up --fresh: exit %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, "discarded the preserved inventory") || !strings.Contains(out, "1 seat(s) will not be resumed: solo") {
		t.Errorf("up --fresh does not say what it discards:\n%s", out)
	}
	if strings.Contains(out, "resumed 1 seat") {
		t.Errorf("up --fresh resumed a seat:\n%s", out)
	}
	if r, ok := resumeRows(t, home, dir)["solo"]; ok && r.Process == "running" {
		t.Fatalf("solo runs after up --fresh: %+v", r)
	}
	if out, stderr, code := runIn(t, home, dir, "spawn", "solo"); code != 0 {
		t.Fatalf("spawn solo after up --fresh (its name must be free): exit %d\n%s%s", code, out, stderr)
	}
	if uid := resumeRows(t, home, dir)["solo"].LifecycleUID; uid == old {
		t.Errorf("the new solo took the discarded lifecycle %s", old)
	}
}

// TestPreserveRefusesSupervisedSeats: a seat of a supervise manager cannot
// be preserved (the request reaches only the mesh), so down
// --preserve-state refuses, naming it, and stops nothing.
func TestPreserveRefusesSupervisedSeats(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{"shell": "agent: command\ncommand: sh"})
	upIn(t, home, dir)
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	idFile := filepath.Join(t.TempDir(), "sup.id")
	cmd, _, done := foreground(t, home, dir, "Ctrl-C to stop", "supervise", "--id-file", idFile)
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
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
	t.Cleanup(func() { runIn(t, home, dir, "stop", "shell") }) // before its supervise is killed
	out, stderr, code := runIn(t, home, dir, "down", "--preserve-state")
	if code != 1 || !strings.Contains(stderr, "run under supervise managers, which down --preserve-state cannot preserve: shell") {
		t.Fatalf("down --preserve-state with a supervised seat: exit %d\n%s%s", code, out, stderr)
	}
	if r := resumeRows(t, home, dir)["shell"]; r.Process != "running" {
		t.Errorf("the refused down stopped the supervised seat: %+v", r)
	}
	if st, _, _ := runIn(t, home, dir, "status"); !strings.Contains(st, "seats: up") {
		t.Errorf("the refused down stopped the mesh:\n%s", st)
	}
}
