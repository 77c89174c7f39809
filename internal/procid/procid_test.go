package procid

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
)

func TestIdentityIsPidAndStart(t *testing.T) {
	cmd := exec.Command("sleep", "100")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	id, err := Of(cmd.Process.Pid)
	if err != nil || !id.Alive() || id.Start == 0 {
		t.Fatalf("Of: %v %v alive %v", id, err, id.Alive())
	}
	// The same pid with another start time is another process: never
	// signalled.
	other := ID{PID: id.PID, Start: id.Start + 1}
	if other.Alive() {
		t.Error("a different start time reads alive")
	}
	if err := other.Signal(syscall.SIGKILL); !errors.Is(err, ErrGone) {
		t.Errorf("signal to a mismatched identity: %v, want ErrGone", err)
	}
	if !id.Alive() {
		t.Fatal("the mismatched signal reached the process")
	}
	if err := id.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if id.Alive() {
		t.Error("a reaped process reads alive")
	}
	if err := id.Signal(syscall.SIGTERM); !errors.Is(err, ErrGone) {
		t.Errorf("signal to a reaped process: %v, want ErrGone", err)
	}
	if Booted().IsZero() {
		t.Error("no boot time")
	}
}

func TestSessionAndDescendants(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 100 & sleep 100 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var members []ID
	testutil.WaitFor(t, 5*time.Second, func() error {
		if members = Session(cmd.Process.Pid); len(members) != 2 {
			return fmt.Errorf("session members %v, want the two sleeps", members)
		}
		return nil
	})
	if d := Descendants(cmd.Process.Pid); len(d) != 2 {
		t.Errorf("descendants %v, want the two sleeps", d)
	}
	if n := KillAll(members); n != 2 {
		t.Errorf("KillAll reached %d", n)
	}
}

// Waiting tells a program that waits from one still computing, and from
// one that has exited but is not yet reaped.
func TestWaitingIsEveryThreadAsleep(t *testing.T) {
	sleeper := exec.Command("sleep", "100")
	busy := exec.Command("sh", "-c", "while :; do :; done")
	quitter := exec.Command("sh", "-c", "exit 3")
	for _, c := range []*exec.Cmd{sleeper, busy, quitter} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	}
	ids := map[string]ID{}
	for name, c := range map[string]*exec.Cmd{"sleeper": sleeper, "busy": busy, "quitter": quitter} {
		id, err := Of(c.Process.Pid)
		if err != nil && name != "quitter" {
			t.Fatal(err)
		}
		ids[name] = ID{PID: c.Process.Pid, Start: id.Start}
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		if !ids["sleeper"].Waiting() {
			return fmt.Errorf("sleep 100 does not read waiting")
		}
		return nil
	})
	// The busy loop may be descheduled but never sleeps: it must never read
	// waiting, however often asked.
	for range 200 {
		if ids["busy"].Waiting() {
			t.Fatal("a busy loop reads waiting")
		}
	}
	// The quitter exits and stays a zombie until reaped.
	testutil.WaitFor(t, 10*time.Second, func() error {
		if ids["quitter"].Alive() {
			return fmt.Errorf("the quitter still runs")
		}
		return nil
	})
	if ids["quitter"].Waiting() {
		t.Error("an exited, unreaped process reads waiting")
	}
}
