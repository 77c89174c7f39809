package seat_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cotal-go/cotal/seat/client"
)

// TestLiveDuringSpawn calls Live, which Ctrl-C and the dashboard's quit
// question call, while a spawn sets the seat's process. Run under -race it
// caught Live reading the seat's pty under the manager's lock while the
// launch wrote it under the seat's.
func TestLiveDuringSpawn(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	m := h.m.Manager()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = m.Live()
			runtime.Gosched()
		}
	}()
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell"})
	waitFor(t, 10*time.Second, func() error {
		if live := m.Live(); !slices.Contains(live, acc.Name) {
			return fmt.Errorf("live seats %v, want %s among them", live, acc.Name)
		}
		return nil
	})
	close(stop)
	<-done
}
