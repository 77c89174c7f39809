package seat_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/keeper"
)

// A seat whose process starts after Close (or Release) has swept the
// seats, when it had no process yet, is stopped by its own launch (or, by
// Release, let go of into its keeper's custody): Close returns, and
// nothing the close meant to end is left running.
func TestCloseDuringASpawn(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(map[bool]string{false: "close", true: "release"}[keep], func(t *testing.T) {
			h := startMesh(t, 10*time.Second)
			h.persona("shell", "sh", []string{"-c", "echo up; while :; do sleep 1; done"}, nil)
			started := make(chan struct{})
			seat.OnStarted(t, func(ctx context.Context) {
				close(started)
				<-ctx.Done() // the close has swept the seats and cancelled the manager
			})
			acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell"})
			select {
			case <-started:
			case <-time.After(30 * time.Second):
				t.Fatal("the seat's process did not start")
			}
			kept := h.keeperOf("shell", acc.UID)
			if keep {
				h.m.KeepSeatsOnClose()
			}
			closed := make(chan error, 1)
			go func() { closed <- h.m.Close() }()
			// Close waits at most CloseStopWait for the seats it stops, the
			// rest of it (the broker, the connectors) takes seconds at most.
			select {
			case err := <-closed:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(seat.CloseStopWait + 20*time.Second):
				t.Fatal("Close hangs on a seat whose process started as it closed")
			}
			if !keep {
				waitFor(t, keeper.FinishWait+5*time.Second, func() error {
					if kept.Seat.Alive() || kept.Keeper.Alive() {
						return fmt.Errorf("seat %v or keeper %v outlives the close that stopped the seats", kept.Seat, kept.Keeper)
					}
					return nil
				})
				// The next manager has nothing of it to take back.
				h.restart(false)
				if r, ok := row(ps(t, h.c, h.iid), "shell"); ok {
					t.Errorf("the next manager lists the stopped seat: %+v", r)
				}
				return
			}
			if !kept.Seat.Alive() || !kept.Keeper.Alive() {
				t.Fatalf("seat %v or keeper %v did not outlive a close that keeps the seats", kept.Seat, kept.Keeper)
			}
			h.restart(true)
			waitRow(t, h, "shell", func(r client.Row) error {
				if !r.Running() || r.ReattachedMs == 0 || r.LifecycleUID != acc.UID {
					return errors.New("not taken back yet")
				}
				return nil
			})
		})
	}
}
