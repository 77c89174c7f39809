package seat_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
)

// custodySeats is how many seats the custody benchmark runs.
const custodySeats = 10

// BenchmarkTakeBackTenSeats: a mesh start that takes back ten seats from
// their keepers (from the start until every one runs, reattached and on
// the mesh), and one that resumes the ten from a preserved inventory
// (until every one runs again, resumed and on the mesh), next to, in the
// same iteration, a fresh start that spawns the ten (from the start until
// every spawn's goal succeeded). Only the ratios mean anything on a
// shared machine:
//
//	go test -run XXX -bench TakeBack -benchtime 5x ./seat
func BenchmarkTakeBackTenSeats(b *testing.B) {
	var fresh, back, resumed time.Duration
	for range b.N {
		start := time.Now()
		h := startMesh(b, 10*time.Second)
		h.persona("shell", "sh", []string{"-c", "echo up; while :; do sleep 1; done"}, nil)
		var goals []string
		for i := range custodySeats {
			acc := mustSpawn(b, h.c, h.iid, client.SpawnArgs{Persona: "shell", Name: fmt.Sprintf("s%d", i)})
			goals = append(goals, acc.GoalID)
		}
		for _, g := range goals {
			if res := goal(b, h.c, h.iid, g, 30*time.Second); res.State != ep.GoalSucceeded {
				b.Fatalf("spawn goal %s: %s %+v", g, res.State, res.Error)
			}
		}
		fresh += time.Since(start)

		h.m.KeepSeatsOnClose()
		if err := h.m.Close(); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		m, err := host.Start(ctxT(b), host.Config{Paths: h.paths, ProjectDir: h.project})
		if err != nil {
			b.Fatal(err)
		}
		h.m = m
		b.Cleanup(func() { _ = m.Close() })
		h.op = h.conn("operator")
		h.c = h.client(h.op, h.caller)
		waitFor(b, 60*time.Second, func() error {
			cs, err := mgr(h.c).Census(ctxT(b), h.iid)
			if err != nil {
				return err
			}
			n := 0
			for _, r := range cs.Rows {
				if r.Running() && r.ReattachedMs != 0 && r.Mesh != "offline" {
					n++
				}
			}
			if n < custodySeats {
				return fmt.Errorf("%d of %d seats taken back", n, custodySeats)
			}
			return nil
		})
		back += time.Since(start)

		h.m.PreserveSeatsOnClose()
		if err := h.m.Close(); err != nil {
			b.Fatal(err)
		}
		if err := seat.MarkReady(host.PreserveDir(h.paths), seat.ReadyMark{}); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if m, err = host.Start(ctxT(b), host.Config{Paths: h.paths, ProjectDir: h.project}); err != nil {
			b.Fatal(err)
		}
		h.m = m
		b.Cleanup(func() { _ = m.Close() })
		h.op = h.conn("operator")
		h.c = h.client(h.op, h.caller)
		waitFor(b, 60*time.Second, func() error {
			cs, err := mgr(h.c).Census(ctxT(b), h.iid)
			if err != nil {
				return err
			}
			n := 0
			for _, r := range cs.Rows {
				if r.Running() && r.ResumedMs != 0 && r.Mesh != "offline" {
					n++
				}
			}
			if n < custodySeats {
				return fmt.Errorf("%d of %d seats resumed", n, custodySeats)
			}
			return nil
		})
		resumed += time.Since(start)
		h.killSeats(h.iid)
	}
	b.ReportMetric(float64(fresh.Milliseconds())/float64(b.N), "fresh-up-10-spawns-ms")
	b.ReportMetric(float64(back.Milliseconds())/float64(b.N), "up-10-reattached-ms")
	b.ReportMetric(float64(resumed.Milliseconds())/float64(b.N), "up-10-resumed-ms")
	b.ReportMetric(float64(back)/float64(fresh), "reattach/fresh")
	b.ReportMetric(float64(resumed)/float64(fresh), "resume/fresh")
	b.ReportMetric(0, "ns/op")
}
