package pty

import (
	"bytes"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSubscribeReceivesOutput(t *testing.T) {
	s := startSeat(t, "sh")
	<-s.FirstOutput()
	ch, cancel := s.Subscribe()
	if _, err := s.Paste("echo sub-$((6*7))", true); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	deadline := time.After(5 * time.Second)
	for !bytes.Contains(got.Bytes(), []byte("sub-42")) {
		select {
		case b, ok := <-ch:
			if !ok {
				t.Fatalf("channel closed; got %q", got.String())
			}
			got.Write(b)
		case <-deadline:
			t.Fatalf("no sub-42 in %q", got.String())
		}
	}
	cancel()
	cancel() // idempotent
	if _, ok := <-ch; ok {
		// Chunks queued before cancel may remain; drain them.
		for range ch {
		}
	}
}

func TestSubscribeClosedAtEndOfOutput(t *testing.T) {
	s := startSeat(t, "sh", "-c", "read x; echo bye")
	ch, _ := s.Subscribe()
	if _, err := s.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	waitDone(t, s, 5*time.Second)
	for range ch {
	}
	late, _ := s.Subscribe()
	if _, ok := <-late; ok {
		t.Error("a subscription after the end is open")
	}
}

// A subscriber that never reads must not block the seat: it is dropped
// (its channel closed while the seat runs) and the screen keeps updating.
func TestSlowSubscriberDoesNotBlockSeat(t *testing.T) {
	old := subscriberBuffer
	subscriberBuffer = 4
	t.Cleanup(func() { subscriberBuffer = old })

	s := startSeat(t, "sh", "-c", `i=0; while read x; do i=$((i+1)); echo step-$i; done`)
	stuck, _ := s.Subscribe()
	// Each step waits for the previous one to reach the screen, so every step
	// is at least one chunk of its own.
	for i := 1; i <= 12; i++ {
		if _, err := s.Write([]byte("\r")); err != nil {
			t.Fatal(err)
		}
		waitScreen(t, s, fmt.Sprintf("step-%d", i))
	}
	n := 0
	deadline := time.After(5 * time.Second)
	for open := true; open; {
		select {
		case _, open = <-stuck:
			if open {
				n++
			}
		case <-deadline:
			t.Fatal("the lagging subscriber was not dropped")
		}
	}
	if n > 4 {
		t.Errorf("lagging subscriber got %d chunks; its buffer is 4", n)
	}
	if !s.Running() {
		t.Fatal("seat ended; want it still running")
	}
}

// Regression: once the child has exited, a read of the pty master returns
// EIO, not EOF. It must end the stream (Done), not spin or be reported.
func TestReadEIOAfterExitEndsStream(t *testing.T) {
	s := startSeat(t, "sh", "-c", "echo out-before-exit")
	waitDone(t, s, 5*time.Second)
	if !strings.Contains(s.Screen(), "out-before-exit") {
		t.Errorf("output before exit lost:\n%s", s.Screen())
	}
}

// Regression: closing the pty master unblocks a pending Read only when the
// master is non-blocking, and creack/pty leaves it blocking. (Killing the
// session leader hangs the pty up, which also ends the read, so this closes
// the master of a live process to test the read itself.)
func TestMasterCloseUnblocksPendingRead(t *testing.T) {
	s := startSeat(t, "sh", "-c", "echo ready; sleep 30")
	waitScreen(t, s, "ready")
	s.releaseMaster()
	select {
	case <-s.pumpDone:
	case <-time.After(2 * time.Second):
		t.Fatal("closing the master did not unblock the pending read")
	}
}

func TestCloseWhileRunning(t *testing.T) {
	g, fds := runtime.NumGoroutine(), countFDs(t)
	s, _ := startWithOrphan(t, "sleep 30")
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Fatal("Close of a running seat blocked")
	}
	if _, sig, ok := s.ExitStatus(); !ok || sig != "SIGKILL" {
		t.Errorf("ExitStatus signal %q, %v; want SIGKILL", sig, ok)
	}
	checkNoLeaks(t, g, fds)
}

// A process that exits while a descendant in its own session keeps the pty
// open is still Done: the session leader's exit hangs the pty up, and the
// drain grace bounds whatever else could keep the master readable.
func TestDoneWhenDescendantHoldsPty(t *testing.T) {
	s, _ := startWithOrphan(t, "exit 0")
	waitDone(t, s, drainGrace+2*time.Second)
}

// startWithOrphan starts sh with a child in its own session holding the pty,
// then runs tail; the orphan is killed when the test ends.
func startWithOrphan(t *testing.T, tail string) (*Seat, int) {
	t.Helper()
	s := startSeat(t, "sh", "-c", `setsid sleep 30 & echo orphan=$!; `+tail)
	var pid int
	re := regexp.MustCompile(`orphan=(\d+)`)
	waitFor(t, 5*time.Second, func() error {
		m := re.FindStringSubmatch(s.Screen())
		if m == nil {
			return fmt.Errorf("no orphan pid on screen:\n%s", s.Screen())
		}
		pid, _ = strconv.Atoi(m[1])
		return nil
	})
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return s, pid
}

func TestScreenWideRunesAndTrim(t *testing.T) {
	s := startSeat(t, "sh", "-c", `printf '宽字 x   \n\n\n'; sleep 5`)
	waitFor(t, 5*time.Second, func() error {
		if got := s.Screen(); got != "宽字 x" {
			return fmt.Errorf("Screen = %q", got)
		}
		return nil
	})
}

func TestScreenANSIRepaints(t *testing.T) {
	s := startSeat(t, "sh", "-c", `printf '\033[?2004h\033[1mbold\033[m plain\n'; sleep 5`)
	waitScreen(t, s, "bold plain")
	got := s.ScreenANSI()
	for _, want := range []string{"\x1b[2J", "\x1b[1;1H", "bold", "\x1b[?2004h", "\x1b[2;1H"} {
		if !strings.Contains(got, want) {
			t.Errorf("ScreenANSI lacks %q: %q", want, got)
		}
	}
}

func TestNoLeaksAfterDoneAndClose(t *testing.T) {
	g, fds := runtime.NumGoroutine(), countFDs(t)

	a := startSeat(t, "sh")
	ch, _ := a.Subscribe()
	if _, err := a.Paste("echo leak-$((1+1)); exit 0", true); err != nil {
		t.Fatal(err)
	}
	waitDone(t, a, 5*time.Second)
	for range ch {
	}
	a.Close()
	a.Close()

	b := startSeat(t, "sh", "-c", `printf '\033[6n'; sleep 30`)
	<-b.FirstOutput()
	b.Close()
	if _, _, ok := b.ExitStatus(); !ok {
		t.Error("Close returned before the process exited")
	}

	checkNoLeaks(t, g, fds)
}

// A flood reaches subscribers in read buffers filled with what the pty
// holds, not in the 4 KiB pieces it hands out per read: every chunk costs
// the subscribers (an attach session sends each as a frame) and the
// emulator's queue.
func TestFloodReadInFullBuffers(t *testing.T) {
	s := startSeat(t, "sh", "-c", "read go; yes 0123456789012345678901234567890123456789012345678901234567890123456789012345678 | head -c 2000000")
	ch, cancel := s.Subscribe()
	defer cancel()
	if _, err := s.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	var n, chunks, largest int
	for c := range ch {
		n += len(c)
		chunks++
		largest = max(largest, len(c))
	}
	t.Logf("%d bytes in %d chunks, the largest %d bytes", n, chunks, largest)
	if n < 2000000 || largest <= 4096 {
		t.Errorf("%d bytes in %d chunks, none over 4 KiB", n, chunks)
	}
}
