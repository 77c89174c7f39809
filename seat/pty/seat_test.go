package pty

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestPasteEchoShowsOnScreen(t *testing.T) {
	s := startSeat(t, "sh")
	<-s.FirstOutput() // the prompt
	before := s.LastOutput()
	if before.IsZero() {
		t.Fatal("LastOutput is zero after the first output")
	}
	if _, err := s.Paste("echo hello-$((6*7))", true); err != nil {
		t.Fatalf("Paste: %v", err)
	}
	waitScreen(t, s, "hello-42")
	if !s.LastOutput().After(before) {
		t.Errorf("LastOutput did not move: %v then %v", before, s.LastOutput())
	}
	in := []byte("echo w-$((1+1))\r")
	n, err := s.Write(in)
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(in))
	}
	waitScreen(t, s, "w-2")
}

func TestExitCode(t *testing.T) {
	s := startSeat(t, "sh", "-c", "exit 3")
	waitDone(t, s, 5*time.Second)
	code, sig, ok := s.ExitStatus()
	if !ok || code != 3 || sig != "" {
		t.Fatalf("ExitStatus = %d, %q, %v; want 3, \"\", true", code, sig, ok)
	}
	if s.Running() {
		t.Error("Running after exit")
	}
}

func TestExitSignal(t *testing.T) {
	s := startSeat(t, "sh", "-c", "kill -9 $$")
	waitDone(t, s, 5*time.Second)
	code, sig, ok := s.ExitStatus()
	if !ok || sig != "SIGKILL" || code != -1 {
		t.Fatalf("ExitStatus = %d, %q, %v; want -1, SIGKILL, true", code, sig, ok)
	}
}

func TestExitStatusWhileRunning(t *testing.T) {
	s := startSeat(t, "sh", "-c", "sleep 5")
	if _, _, ok := s.ExitStatus(); ok {
		t.Fatal("ExitStatus ok while running")
	}
}

func TestFirstOutputAndTail(t *testing.T) {
	s := startSeat(t, "sh", "-c", "echo first-line; sleep 5")
	if !s.LastOutput().IsZero() {
		select {
		case <-s.FirstOutput():
		default:
			t.Fatal("LastOutput set before FirstOutput closed")
		}
	}
	select {
	case <-s.FirstOutput():
	case <-time.After(5 * time.Second):
		t.Fatal("FirstOutput not closed")
	}
	waitFor(t, 5*time.Second, func() error {
		if got := s.Tail(1); len(got) != 1 || got[0] != "first-line" {
			return errors.New("Tail(1) = " + strings.Join(got, "|"))
		}
		return nil
	})
	if s.Started().IsZero() || s.PID() <= 0 {
		t.Errorf("Started %v, PID %d", s.Started(), s.PID())
	}
}

func TestMissingBinaryNamesPath(t *testing.T) {
	_, err := Start(context.Background(), Config{Path: "no-such-seat-binary-x"})
	if err == nil || !strings.Contains(err.Error(), "no-such-seat-binary-x") || !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("Start of a missing binary: %v", err)
	}
}

func TestTermAndSize(t *testing.T) {
	s := startConfig(t, Config{Path: "sh", Env: []string{"TERM=dumb", "PATH=/usr/bin:/bin"}})
	if _, err := s.Paste("echo term=$TERM; stty size", true); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, s, "term=xterm-256color")
	waitScreen(t, s, "\n32 120")
	if err := s.Resize(80, 24); err != nil {
		t.Fatalf("Resize: %v", err)
	}
	if c, r := s.Size(); c != 80 || r != 24 {
		t.Errorf("Size = %dx%d; want 80x24", c, r)
	}
	if _, err := s.Paste("stty size", true); err != nil {
		t.Fatal(err)
	}
	// Not at a line's start: typed before the shell printed its prompt,
	// the line is echoed at once and the answer follows the prompt.
	waitScreen(t, s, "24 80")
	if err := s.Resize(0, 10); err == nil {
		t.Error("Resize(0, 10) accepted")
	}
}

func TestStopGracefulTrapped(t *testing.T) {
	s := startSeat(t, "sh", "-c", `trap "exit 7" TERM; echo ready; while :; do sleep 0.05; done`)
	waitScreen(t, s, "ready")
	start := time.Now()
	if err := s.Stop(context.Background(), true); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("graceful stop of a trapping process took %v", d)
	}
	if code, sig, ok := s.ExitStatus(); !ok || code != 7 || sig != "" {
		t.Errorf("ExitStatus = %d, %q, %v; want 7", code, sig, ok)
	}
}

// An interactive shell ignores SIGTERM: a graceful stop hangs it up, as
// closing its terminal would, and it ends at once instead of being killed.
func TestStopGracefulHangsUpAShellThatIgnoresTerm(t *testing.T) {
	s := startSeat(t, "sh", "-i")
	if _, err := s.Paste("echo rea''dy", true); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, s, "ready")
	start := time.Now()
	if err := s.Stop(context.Background(), true); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("graceful stop of an interactive shell took %v", d)
	}
	if _, sig, ok := s.ExitStatus(); !ok || sig != "SIGHUP" {
		t.Errorf("ExitStatus signal %q, ok %v; want SIGHUP", sig, ok)
	}
}

func TestStopGracefulIgnoredKilledAfter3s(t *testing.T) {
	s := startSeat(t, "sh", "-c", `trap "" TERM HUP; echo ready; while :; do sleep 0.05; done`)
	waitScreen(t, s, "ready")
	start := time.Now()
	if err := s.Stop(context.Background(), true); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(start); d < killAfter || d > killAfter+1500*time.Millisecond {
		t.Errorf("stop took %v; want about %v", d, killAfter)
	}
	if _, sig, ok := s.ExitStatus(); !ok || sig != "SIGKILL" {
		t.Errorf("ExitStatus signal %q, ok %v; want SIGKILL", sig, ok)
	}
}

func TestStopNotGraceful(t *testing.T) {
	s := startSeat(t, "sh", "-c", `echo ready; sleep 30`)
	waitScreen(t, s, "ready")
	start := time.Now()
	if err := s.Stop(context.Background(), false); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("immediate stop took %v", d)
	}
	if _, sig, _ := s.ExitStatus(); sig != "SIGKILL" {
		t.Errorf("signal %q; want SIGKILL", sig)
	}
	if err := s.Stop(context.Background(), true); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStopHonoursContext(t *testing.T) {
	s := startSeat(t, "sh", "-c", `trap "" TERM HUP; echo ready; while :; do sleep 0.05; done`)
	waitScreen(t, s, "ready")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Stop(ctx, true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop = %v; want deadline exceeded", err)
	}
}
