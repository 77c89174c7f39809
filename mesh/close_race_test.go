package mesh_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/cotal-go/cotal/mesh"
)

// TestRosterDuringClose reads the roster while the endpoint closes: the
// first Roster starts the presence watcher and Close stops it, so under
// -race the two must not touch the watcher unsynchronised, and a watcher
// started after Close must not be left running. Each round is a fresh
// endpoint, so every Roster is the first.
func TestRosterDuringClose(t *testing.T) {
	h := newHarness(t, true)
	for range 20 {
		e := h.connect("", mesh.Options{Name: "racer", OneShot: true})
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, _, err := e.Roster(context.Background()); err != nil && !errors.Is(err, mesh.ErrClosed) {
				t.Errorf("Roster while closing: %v", err)
			}
		}()
		go func() {
			defer wg.Done()
			_ = e.Close()
		}()
		wg.Wait()
		if _, _, err := e.Roster(context.Background()); !errors.Is(err, mesh.ErrClosed) {
			t.Fatalf("Roster after Close = %v, want ErrClosed", err)
		}
	}
}
