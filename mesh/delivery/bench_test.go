package delivery_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh"
)

// BenchmarkDurableFanout is one post until the last member has it in
// hand, through the durable path (fan-out writer, trusted reader, member
// backstop) next to the live path in the same run:
//
//	go test -run XXX -bench DurableFanout -benchtime 200x ./mesh/delivery
func BenchmarkDurableFanout(b *testing.B) {
	for _, n := range []int{10, 100} {
		for _, path := range []string{"durable", "live"} {
			b.Run(fmt.Sprintf("members=%d/%s", n, path), func(b *testing.B) {
				h := newBenchHarness(b)
				ch := "team"
				if path == "live" {
					ch = "live"
					h.setClass("live", mesh.ClassLive)
				}
				off := false
				if _, err := h.reg.Set(ctxT(b), ch, mesh.ChannelConfig{Replay: &off}); err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				got := make(chan struct{}, n)
				for i := range n {
					creds, _ := h.mint(agent{name: fmt.Sprintf("m%03d", i), subscribe: []string{ch}})
					var e *mesh.Endpoint
					if path == "durable" {
						// Hold the channel durably, then read only the
						// backstop: no live subscription.
						first := h.connect(creds, mesh.Options{OneShot: true})
						_ = first.Close()
						e = h.connect(creds, mesh.Options{Subscribe: []string{}})
					} else {
						e = h.connect(creds, mesh.Options{OneShot: true})
					}
					go func() {
						for {
							it, err := e.Next(ctx)
							if err != nil {
								return
							}
							got <- struct{}{}
							_ = it.Ack()
						}
					}()
				}
				p := h.poster("poster")
				var lat []time.Duration
				b.ResetTimer()
				for i := range b.N {
					start := time.Now()
					if _, err := p.Send(ctx, ch, fmt.Sprintf("post %d", i)); err != nil {
						b.Fatal(err)
					}
					for range n {
						<-got
					}
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
