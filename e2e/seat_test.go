package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/seat/client"
)

// project makes a project dir whose .cotal/agents holds the given
// personas (name -> frontmatter lines after name:).
func project(t testing.TB, personas map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	agents := filepath.Join(dir, ".cotal", "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, front := range personas {
		body := fmt.Sprintf("---\nname: %s\n%s\n---\n", name, front)
		if err := os.WriteFile(filepath.Join(agents, name+".md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runIn runs cotal from dir (where its personas are), in space "seats",
// for at most commandTimeout.
func runIn(t *testing.T, home, dir string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cotalBin, append([]string{"--space", "seats"}, args...)...)
	cmd.Env = cotalEnv(home)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok && ctx.Err() == nil {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running cotal %v: %v (no exit within %s?)\nstdout: %s\nstderr: %s", args, err, commandTimeout, out.String(), errb.String())
	}
	return out.String(), errb.String(), code
}

func TestSeatSpawnInputScreenPsStop(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{
		"shell": "agent: command\ncommand: sh",
		"quick": "agent: command\ncommand: sh\nargs: [\"-c\", \"echo leaving now; exit 7\"]",
	})
	if _, stderr, code := runIn(t, home, dir, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })

	out, stderr, code := runIn(t, home, dir, "spawn", "shell")
	if code != 0 || !strings.Contains(out, "accepted: seat shell") || !strings.Contains(out, "ready: shell is up") {
		t.Fatalf("spawn shell: exit %d\n%s\n%s", code, out, stderr)
	}
	out, _, code = runIn(t, home, dir, "input", "shell", "echo", "e2e-$((6*7))")
	if code != 0 || !strings.HasPrefix(out, "sent ") || !strings.Contains(out, " bytes to shell") {
		t.Fatalf("input: exit %d %q", code, out)
	}
	waitFor(t, 10*time.Second, func() error {
		out, _, _ := runIn(t, home, dir, "screen", "shell")
		if !strings.Contains(out, "e2e-42") {
			return fmt.Errorf("screen:\n%s", out)
		}
		return nil
	})
	// A dash-leading text goes verbatim after --; an empty or oversized one
	// is refused as bad input and nothing is typed.
	if out, stderr, code := runIn(t, home, dir, "input", "--no-enter", "shell", "--", "-x"); code != 0 || !strings.Contains(out, "sent 2 bytes to shell") {
		t.Fatalf("input -- -x: exit %d %q %q", code, out, stderr)
	}
	if _, stderr, code := runIn(t, home, dir, "input", "shell", ""); code != 2 || !strings.Contains(stderr, "text") {
		t.Fatalf("input of empty text: exit %d %q", code, stderr)
	}
	if _, stderr, code := runIn(t, home, dir, "input", "shell", strings.Repeat("y", 65537)); code != 2 || !strings.Contains(stderr, "65536") {
		t.Fatalf("input of 65537 characters: exit %d %q", code, stderr)
	}
	out, _, code = runIn(t, home, dir, "ps", "--json")
	var cs client.Census
	if code != 0 || json.Unmarshal([]byte(out), &cs) != nil || len(cs.Rows) != 1 || !cs.Rows[0].Running() || cs.Rows[0].PID == 0 || cs.Rows[0].Mesh != "idle" || cs.Rows[0].Manager == "" {
		t.Fatalf("ps --json: exit %d\n%s", code, out)
	}

	// A bare down refuses while the seat is live, and names it.
	if _, stderr, code := runIn(t, home, dir, "down"); code != 1 || !strings.Contains(stderr, "shell") {
		t.Fatalf("down with a live seat: exit %d %q", code, stderr)
	}
	out, stderr, code = runIn(t, home, dir, "stop", "shell", "--force")
	if code != 0 || !strings.Contains(out, "stopped shell: killed at once (SIGKILL)") {
		t.Fatalf("stop: exit %d %s %s", code, out, stderr)
	}
	// Offline at once: the roster says so on the next read.
	out, _, _ = runIn(t, home, dir, "roster", "--json")
	var roster struct {
		Peers []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		} `json:"peers"`
	}
	if err := json.Unmarshal([]byte(out), &roster); err != nil || len(roster.Peers) != 1 || roster.Peers[0].Status != "offline" {
		t.Fatalf("roster after stop: %v\n%s", err, out)
	}

	out, _, code = runIn(t, home, dir, "spawn", "quick")
	if code != 1 || !strings.Contains(out, "failed") || !strings.Contains(out, "exit status 7") || !strings.Contains(out, "leaving now") {
		t.Fatalf("spawn of a command that exits at once: exit %d\n%s", code, out)
	}
	if _, stderr, code := runIn(t, home, dir, "spawn", "nobody"); code == 0 || !strings.Contains(stderr, "nobody") {
		t.Fatalf("spawn of an unknown persona: exit %d %q", code, stderr)
	}
}

func TestSeatNamesAreNumberedAndPinnedNamesRefused(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{"shell": "agent: command\ncommand: sh"})
	if _, stderr, code := runIn(t, home, dir, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	for _, want := range []string{"shell", "shell_2"} {
		out, stderr, code := runIn(t, home, dir, "spawn", "shell")
		if code != 0 || !strings.Contains(out, "accepted: seat "+want+" ") {
			t.Fatalf("spawn: want %s, exit %d\n%s%s", want, code, out, stderr)
		}
	}
	_, stderr, code := runIn(t, home, dir, "spawn", "shell", "--name", "shell")
	if code != 2 || !strings.Contains(stderr, `the name "shell" is taken`) || !strings.Contains(stderr, "nothing was started") {
		t.Fatalf("pinned collision: exit %d %q", code, stderr)
	}
}

func TestTwoManagersPsAttributesAndAGoneOneMakesItIncomplete(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{"shell": "agent: command\ncommand: sh"})
	if _, stderr, code := runIn(t, home, dir, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	idFile := filepath.Join(t.TempDir(), "second.id")
	sup := exec.Command(cotalBin, "supervise", "--space", "seats", "--id-file", idFile)
	sup.Env, sup.Dir = cotalEnv(home), dir
	supLog, err := os.Create(filepath.Join(t.TempDir(), "supervise.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer supLog.Close()
	sup.Stdout, sup.Stderr = supLog, supLog
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sup.Process.Kill(); _ = sup.Wait() })

	var first, second string
	waitFor(t, 10*time.Second, func() error {
		out, _, _ := runIn(t, home, dir, "ps", "--json")
		var cs client.Census
		if json.Unmarshal([]byte(out), &cs) != nil || len(cs.Managers) != 2 {
			log, _ := os.ReadFile(supLog.Name())
			return fmt.Errorf("managers so far: %s\nsupervise: %s", out, log)
		}
		id, err := os.ReadFile(idFile)
		if err != nil {
			return err
		}
		var f struct {
			InstanceID string `json:"instanceId"`
		}
		if err := json.Unmarshal(id, &f); err != nil || f.InstanceID == "" {
			return fmt.Errorf("id file %s: %v %s", idFile, err, id)
		}
		second = f.InstanceID
		first = cs.Managers[0]
		if first == second {
			first = cs.Managers[1]
		}
		return nil
	})
	for _, on := range []string{first, second} {
		args := []string{"spawn", "shell", "--on", on}
		if out, stderr, code := runIn(t, home, dir, args...); code != 0 {
			t.Fatalf("spawn %v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	out, _, code := runIn(t, home, dir, "ps", "--json")
	var cs client.Census
	if code != 0 || json.Unmarshal([]byte(out), &cs) != nil || len(cs.Rows) != 2 || cs.Rows[0].Manager == cs.Rows[1].Manager {
		t.Fatalf("ps over two managers: exit %d\n%s", code, out)
	}
	// down --with-agents stops the seats of every manager, the supervise
	// process's too, before the mesh.
	out, stderr, code := runIn(t, home, dir, "down", "--with-agents")
	if code != 0 || !strings.Contains(out, "stopped 2 seat(s)") {
		t.Fatalf("down --with-agents: exit %d\n%s%s", code, out, stderr)
	}
	for _, r := range cs.Rows {
		if r.PID <= 0 || syscall.Kill(r.PID, 0) == nil {
			t.Fatalf("seat %s of manager %s (pid %d) still runs after down --with-agents", r.Name, r.Manager, r.PID)
		}
	}
	if _, stderr, code := runIn(t, home, dir, "up", "--detach"); code != 0 {
		t.Fatalf("up again: %s", stderr)
	}
	// A manager that dies without deregistering leaves the census
	// incomplete: ps names it and exits 1.
	_ = sup.Process.Kill()
	_ = sup.Wait()
	_, stderr, code = runIn(t, home, dir, "ps")
	if code != 1 || !strings.Contains(stderr, second) || !strings.Contains(stderr, "incomplete") {
		t.Fatalf("ps with a dead manager: exit %d %q", code, stderr)
	}
}

func TestSetupSeedsADefaultPersonaOnce(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	out, _, code := runIn(t, home, dir, "setup")
	if code != 0 || !strings.Contains(out, "created ") || !strings.Contains(out, "default") {
		t.Fatalf("setup: exit %d %s", code, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".cotal", "agents", "default.md"))
	if err != nil || !strings.Contains(string(b), "capabilities: [spawn, run]") {
		t.Fatalf("seeded persona: %v\n%s", err, b)
	}
	out, _, code = runIn(t, home, dir, "setup")
	if code != 0 || !strings.Contains(out, "kept ") {
		t.Fatalf("second setup: exit %d %s", code, out)
	}
}

func TestStatusShowsDeliveryAndManagers(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	waitFor(t, 10*time.Second, func() error {
		out, _, code := runCotal(t, home, "status", "--json")
		var st struct {
			Delivery string `json:"delivery"`
			Managers int    `json:"managers"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
			return fmt.Errorf("status --json: exit %d\n%s", code, out)
		}
		if !strings.HasPrefix(st.Delivery, "serving") || st.Managers != 1 {
			return fmt.Errorf("delivery %q, %d managers; want serving and 1", st.Delivery, st.Managers)
		}
		return nil
	})
}

// status says whether seats here can be sandboxed, from a real probe: the
// namespace on this kernel, or unsandboxed with the reason.
func TestStatusSaysWhetherSeatsAreSandboxed(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	out, _, _ := runCotal(t, home, "status", "--json")
	var st struct {
		SeatSandbox struct{ Mode, Reason string } `json:"seatSandbox"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	text, _, _ := runCotal(t, home, "status")
	switch st.SeatSandbox.Mode {
	case "namespace", "landlock":
		if !strings.Contains(text, "  seats      sandboxed (") {
			t.Errorf("status text does not say seats are sandboxed:\n%s", text)
		}
	case "none":
		t.Logf("seats here are unsandboxed: %s", st.SeatSandbox.Reason)
		if st.SeatSandbox.Reason == "" || !strings.Contains(text, "  seats      UNSANDBOXED: "+st.SeatSandbox.Reason) {
			t.Errorf("status does not give the reason:\n%s", text)
		}
	default:
		t.Errorf("status --json: seatSandbox %+v\n%s", st.SeatSandbox, out)
	}
}
