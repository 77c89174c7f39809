package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
)

// foreground starts cotal args from dir in space "seats" and waits until
// it has printed ready.
func foreground(t *testing.T, home, dir, ready string, args ...string) (*exec.Cmd, *lockedBuffer, chan error) {
	t.Helper()
	cmd := exec.Command(cotalBin, append([]string{"--space", "seats"}, args...)...)
	cmd.Env, cmd.Dir = cotalEnv(home), dir
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		done <- cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	waitFor(t, 30*time.Second, func() error {
		if !strings.Contains(out.String(), ready) {
			return fmt.Errorf("cotal %v has not said %q:\n%s", args, ready, out)
		}
		return nil
	})
	return cmd, out, done
}

// spawnShell spawns persona shell (on manager on, if set) and returns its
// seat's pid.
func spawnShell(t *testing.T, home, dir, on string) int {
	t.Helper()
	args := []string{"spawn", "shell"}
	if on != "" {
		args = append(args, "--on", on)
	}
	if out, stderr, code := runIn(t, home, dir, args...); code != 0 {
		t.Fatalf("spawn: exit %d\n%s%s", code, out, stderr)
	}
	out, _, _ := runIn(t, home, dir, "ps", "--json")
	var cs struct {
		Rows []struct {
			Manager string `json:"manager"`
			PID     int    `json:"pid"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		t.Fatalf("ps --json: %v\n%s", err, out)
	}
	for _, r := range cs.Rows {
		if on == "" || r.Manager == on {
			return r.PID
		}
	}
	t.Fatalf("no seat in ps:\n%s", out)
	return 0
}

func TestForegroundUpAsksForASecondCtrlCWithLiveSeats(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{"shell": "agent: command\ncommand: sh"})
	cmd, out, done := foreground(t, home, dir, "press Ctrl-C to stop", "up")
	seatPID := spawnShell(t, home, dir, "")

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() error {
		if !strings.Contains(out.String(), "1 seat(s) still running: shell\n") || !strings.Contains(out.String(), "press Ctrl-C again within 10 s") {
			return fmt.Errorf("no warning after the first Ctrl-C:\n%s", out)
		}
		return nil
	})
	if _, _, code := runIn(t, home, dir, "status"); code != 0 || !broker.PIDAlive(seatPID) {
		t.Fatalf("after one Ctrl-C: status exit %d, seat alive %v; want both up", code, broker.PIDAlive(seatPID))
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil || !strings.Contains(out.String(), "mesh seats stopped\n") {
			t.Fatalf("after the second Ctrl-C: %v\n%s", err, out)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("still running after a second Ctrl-C:\n%s", out)
	}
	waitGone(t, seatPID)
}

func TestSuperviseAsksOnCtrlCAndStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{"shell": "agent: command\ncommand: sh"})
	if _, stderr, code := runIn(t, home, dir, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	idFile := filepath.Join(t.TempDir(), "sup.id")
	cmd, out, done := foreground(t, home, dir, "Ctrl-C to stop", "supervise", "--id-file", idFile)
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
	seatPID := spawnShell(t, home, dir, id.InstanceID)

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() error {
		if !strings.Contains(out.String(), "1 seat(s) still running: shell\n") {
			return fmt.Errorf("no warning after Ctrl-C:\n%s", out)
		}
		return nil
	})
	if !broker.PIDAlive(seatPID) {
		t.Fatal("one Ctrl-C stopped the seat")
	}
	// SIGTERM, what `down --with-agents` sends, goes on at once.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("supervise after SIGTERM: %v\n%s", err, out)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("supervise still running after SIGTERM:\n%s", out)
	}
	waitGone(t, seatPID)
}
