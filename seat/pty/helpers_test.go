package pty

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
)

// waitFor polls fn until it returns nil or total passes.
func waitFor(t testing.TB, total time.Duration, fn func() error) {
	t.Helper()
	testutil.WaitFor(t, total, fn)
}

// startSeat starts a seat that is closed when the test ends.
func startSeat(t testing.TB, path string, args ...string) *Seat {
	t.Helper()
	return startConfig(t, Config{Path: path, Args: args})
}

func startConfig(t testing.TB, cfg Config) *Seat {
	t.Helper()
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Start(%s): %v", cfg.Path, err)
	}
	t.Cleanup(s.Close)
	return s
}

// waitScreen waits until the screen contains want.
func waitScreen(t testing.TB, s *Seat, want string) {
	t.Helper()
	waitFor(t, 5*time.Second, func() error {
		if scr := s.Screen(); !strings.Contains(scr, want) {
			return fmt.Errorf("screen has no %q:\n%s", want, scr)
		}
		return nil
	})
}

func waitDone(t testing.TB, s *Seat, total time.Duration) {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(total):
		t.Fatalf("seat %d not done after %v; screen:\n%s", s.PID(), total, s.Screen())
	}
}

func countFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("count fds: %v", err)
	}
	return len(ents)
}

// checkNoLeaks waits until goroutines and fds are back to the baseline.
func checkNoLeaks(t testing.TB, goroutines, fds int) {
	t.Helper()
	waitFor(t, 5*time.Second, func() error {
		g, f := runtime.NumGoroutine(), countFDs(t)
		if g > goroutines || f > fds {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			return fmt.Errorf("goroutines %d (baseline %d), fds %d (baseline %d)\n%s", g, goroutines, f, fds, buf)
		}
		return nil
	})
}

// settle waits until the emulator has drawn all output read so far.
func (s *Seat) settle() {
	s.mu.Lock()
	if s.mirrorEnded {
		s.mu.Unlock()
		return
	}
	w := s.addWaiter(s.seq, true)
	s.mu.Unlock()
	<-w.done
}
