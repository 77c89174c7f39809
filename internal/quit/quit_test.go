package quit

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
)

func TestUntilEndsOnlyAtASignalItTakes(t *testing.T) {
	var asked atomic.Int32
	ctx, stop := Until(context.Background(), func(s os.Signal) bool {
		return asked.Add(1) > 1 && s == syscall.SIGHUP
	})
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		if asked.Load() != 1 {
			return errors.New("the first signal was not put to accept")
		}
		return nil
	})
	if ctx.Err() != nil {
		t.Fatal("a declined signal ended the context")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a taken signal did not end the context")
	}
}
