package seat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/pty"
)

// The benchmarks put the manager, driven over the control surface, next to
// seat/pty driven directly, in the same run (the machines are shared and
// noisy, so only the ratio means anything):
//
//	go test -run XXX -bench . -benchtime 20x ./seat

// latencies collects per-operation durations and reports percentiles.
type latencies []time.Duration

func (l latencies) report(b *testing.B, prefix string) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	pct := func(p float64) float64 {
		return float64(l[int(float64(len(l)-1)*p)].Microseconds())
	}
	b.ReportMetric(pct(0.50), prefix+"p50-µs")
	b.ReportMetric(pct(0.99), prefix+"p99-µs")
	b.ReportMetric(0, "ns/op") // the percentiles are the figure
}

// BenchmarkSpawnToReady is spawn until the goal's terminal fact says
// succeeded (watched on its fact subject, not polled), next to pty.Start of
// the same sh until its first output plus the manager's settle.
func BenchmarkSpawnToReady(b *testing.B) {
	b.Run("manager", func(b *testing.B) {
		h := startMesh(b, 10*time.Second)
		h.persona("shell", "sh", nil, nil)
		var l latencies
		b.ResetTimer()
		for i := range b.N {
			goalID := fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i)
			subj, err := ep.GoalResultSubject(space, seat.Endpoint, h.caller, goalID)
			if err != nil {
				b.Fatal(err)
			}
			facts := make(chan *nats.Msg, 1)
			sub, err := h.op.ChanSubscribe(subj, facts)
			if err != nil {
				b.Fatal(err)
			}
			if err := h.op.Flush(); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			r, err := h.c.Call(context.Background(), seat.Endpoint, "spawn", seat.SpawnArgs{Persona: "shell"},
				ep.On(h.iid), ep.WithGoal(goalID), ep.Timeout(10*time.Second))
			if err != nil {
				b.Fatal(err)
			}
			var res ep.GoalResult
			select {
			case m := <-facts:
				l = append(l, time.Since(start))
				if err := json.Unmarshal(m.Data, &res); err != nil {
					b.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				b.Fatalf("no terminal fact for goal %s", goalID)
			}
			b.StopTimer()
			_ = sub.Unsubscribe()
			var acc seat.SpawnAccepted
			_ = json.Unmarshal(r.Data, &acc)
			if res.State != ep.GoalSucceeded || acc.GoalID != goalID {
				b.Fatalf("goal %s: %s %+v (accepted %+v)", goalID, res.State, res.Error, acc)
			}
			mustCall(b, h.c, h.iid, "despawn", map[string]any{"name": acc.Name, "graceful": false}, nil)
			b.StartTimer()
		}
		b.StopTimer()
		l.report(b, "")
	})
	b.Run("pty", func(b *testing.B) {
		var first, ready latencies
		for range b.N {
			start := time.Now()
			s, err := pty.Start(context.Background(), pty.Config{Path: "sh"})
			if err != nil {
				b.Fatal(err)
			}
			select {
			case <-s.FirstOutput():
			case <-time.After(10 * time.Second):
				b.Fatal("no first output")
			}
			first = append(first, time.Since(start))
			select {
			case <-s.Done():
				b.Fatal("sh exited within the settle")
			case <-time.After(seat.DefaultSettle):
			}
			ready = append(ready, time.Since(start))
			b.StopTimer()
			s.Close()
			b.StartTimer()
		}
		b.StopTimer()
		ready.report(b, "")
		first.report(b, "first-output-")
	})
}

// markerCommand types mark”er-N-end so the echo of the typed line never
// matches; only the command's output reads marker-N-end.
func markerCommand(i int) (cmd, want string) {
	return fmt.Sprintf("echo mark''er-%d-end", i), fmt.Sprintf("marker-%d-end", i)
}

// BenchmarkInputToScreen is the input command until the screen command
// shows the output, next to pty.Paste until pty.Screen shows it (looked at
// after each output chunk).
func BenchmarkInputToScreen(b *testing.B) {
	b.Run("manager", func(b *testing.B) {
		h := startMesh(b, 10*time.Second)
		h.persona("shell", "sh", nil, nil)
		acc := h.ready("shell")
		var l latencies
		b.ResetTimer()
		for i := range b.N {
			cmd, want := markerCommand(i)
			start := time.Now()
			input(b, h.c, h.iid, acc.Name, cmd)
			for deadline := start.Add(5 * time.Second); !strings.Contains(screen(b, h.c, h.iid, acc.Name).Screen, want); {
				if time.Now().After(deadline) {
					b.Fatalf("no %s on screen", want)
				}
			}
			l = append(l, time.Since(start))
		}
		b.StopTimer()
		l.report(b, "")
	})
	b.Run("pty", func(b *testing.B) {
		s, err := pty.Start(context.Background(), pty.Config{Path: "sh"})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		select {
		case <-s.FirstOutput():
		case <-time.After(10 * time.Second):
			b.Fatal("no prompt")
		}
		out, stop := s.Subscribe()
		defer stop()
		var l latencies
		b.ResetTimer()
		for i := range b.N {
			cmd, want := markerCommand(i)
			start := time.Now()
			if _, err := s.Paste(cmd, true); err != nil {
				b.Fatal(err)
			}
			// Look again after each chunk of output rather than spin on the
			// emulator's lock, which the pump needs.
			for !strings.Contains(s.Screen(), want) {
				select {
				case <-out:
				case <-time.After(5 * time.Second):
					b.Fatalf("no %s on screen", want)
				}
			}
			l = append(l, time.Since(start))
		}
		b.StopTimer()
		l.report(b, "")
	})
}
