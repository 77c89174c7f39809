package pty

import (
	"fmt"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/procid"
)

// A job an interactive shell put in the background (in a process group of
// its own, which no signal to the seat's group reaches) ends with the
// seat: it was left running as an orphan before.
func TestSeatEndsItsBackgroundJobs(t *testing.T) {
	s := startSeat(t, "sh", "-i")
	if _, err := s.Write([]byte("sleep 1000 & echo job=$!\r")); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`job=(\d+)`)
	var job procid.ID
	waitFor(t, 5*time.Second, func() error {
		m := re.FindStringSubmatch(s.Screen())
		if m == nil {
			return fmt.Errorf("no job pid on screen:\n%s", s.Screen())
		}
		pid, _ := strconv.Atoi(m[1])
		var err error
		job, err = procid.Of(pid)
		return err
	})
	t.Cleanup(func() { _ = job.Signal(syscall.SIGKILL) })
	if _, err := s.Write([]byte("exit\r")); err != nil {
		t.Fatal(err)
	}
	waitDone(t, s, 5*time.Second)
	waitFor(t, 5*time.Second, func() error {
		if job.Alive() {
			return fmt.Errorf("the background job %v outlives its seat", job)
		}
		return nil
	})
}
