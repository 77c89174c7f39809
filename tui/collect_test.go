package tui

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/internal/testutil"
)

// countingSource answers a census of one seat and counts screen fetches.
type countingSource struct {
	changes chan struct{}
	screens atomic.Int64
	seats   atomic.Int64
}

func (s *countingSource) Seats(context.Context) (Census, error) {
	s.seats.Add(1)
	return Census{Managers: 1, Seats: []Seat{{Name: "shell", Manager: "m1", Process: "running"}}}, nil
}

func (s *countingSource) Changes() <-chan struct{} { return s.changes }

func (s *countingSource) Screen(_ context.Context, seat Seat) (Screen, error) {
	s.screens.Add(1)
	return Screen{Text: "screen of " + seat.Name, Running: true}, nil
}

func TestCollectorBatchesTheCensusAndTheFocusedScreen(t *testing.T) {
	m := startMesh(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, w := dashboard(t, m)
	src := &countingSource{changes: make(chan struct{}, 1)}
	focus := &seatFocus{}
	var mu sync.Mutex
	var census, shots int
	var lastShot *screenShot
	c := &collector{items: e.Next, w: w, seats: src, focus: focus, tick: 50 * time.Millisecond, send: func(msg tea.Msg) {
		b := msg.(batchMsg)
		mu.Lock()
		defer mu.Unlock()
		if b.SeatsChanged && len(b.Census.Seats) == 1 {
			census++
		}
		if b.Shot != nil {
			shots++
			lastShot = b.Shot
		}
	}}
	go c.run(ctx, e)
	// Absence is shown over work the collector provably did: two census
	// rounds (each many screen ticks) with no seat focused.
	waitUntil(t, 10*time.Second, func() bool { return src.seats.Load() >= 2 })
	if n := src.screens.Load(); n != 0 {
		t.Errorf("%d screens fetched with no seat focused", n)
	}
	focus.store(Seat{Name: "shell", Manager: "m1"}, true)
	src.changes <- struct{}{}
	waitUntil(t, 5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return census >= 2 && shots >= 2 && lastShot.Name == "shell" && lastShot.Screen.Text == "screen of shell"
	})
	focus.store(Seat{}, false)
	// A fetch in flight may still land: count from the next census round,
	// then let two more rounds pass.
	rounds := src.seats.Load()
	waitUntil(t, 10*time.Second, func() bool { return src.seats.Load() >= rounds+1 })
	before := src.screens.Load()
	waitUntil(t, 10*time.Second, func() bool { return src.seats.Load() >= rounds+3 })
	if after := src.screens.Load(); after != before {
		t.Errorf("%d screens fetched after the focus was dropped", after-before)
	}
}

// waitUntil polls cond until it holds or total passes.
func waitUntil(t *testing.T, total time.Duration, cond func() bool) {
	t.Helper()
	testutil.WaitFor(t, total, func() error {
		if !cond() {
			return errors.New("condition not met")
		}
		return nil
	})
}
