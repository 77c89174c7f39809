package ep_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/bench"
	"github.com/cotal-go/cotal/mesh/ep"
)

// The benchmarks put the endpoint next to a bare nats.go request/reply on the same broker in the same run (the machines are shared and noisy, so only the ratio means anything):
//
//	go test -run XXX -bench . -benchtime 200x ./mesh/ep

type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	st := bench.Percentiles(l) // as cotal bench reports them
	b.ReportMetric(st.P50, "p50-µs")
	b.ReportMetric(st.P99, "p99-µs")
	b.ReportMetric(0, "ns/op") // the percentiles are the figure
}

// BenchmarkCallRoundTrip is client → handler → reply: the full pipeline (envelope checks, schema validation both ways, derived reply) against a bare request/reply with an echo responder.
func BenchmarkCallRoundTrip(b *testing.B) {
	b.Run("cotal", func(b *testing.B) {
		h := newHarness(b)
		h.start("inst-a")
		c := h.client()
		ctx := context.Background()
		args := map[string]string{"text": "ping"}
		if _, err := c.Call(ctx, endpoint, "echo", args); err != nil { // describe once, outside the measure
			b.Fatal(err)
		}
		var l latencies
		b.ResetTimer()
		for range b.N {
			start := time.Now()
			if _, err := c.Call(ctx, endpoint, "echo", args, ep.Timeout(5*time.Second)); err != nil {
				b.Fatal(err)
			}
			l = append(l, time.Since(start))
		}
		b.StopTimer()
		l.report(b)
	})
	b.Run("raw-nats", func(b *testing.B) {
		h := newHarness(b)
		srv := h.conn("raw server")
		if _, err := srv.Subscribe("raw.echo", func(m *nats.Msg) { _ = m.Respond(m.Data) }); err != nil {
			b.Fatal(err)
		}
		_ = srv.Flush()
		cli := h.conn("raw client")
		body := []byte(`{"text":"ping"}`)
		var l latencies
		b.ResetTimer()
		for range b.N {
			start := time.Now()
			if _, err := cli.Request("raw.echo", body, 5*time.Second); err != nil {
				b.Fatal(err)
			}
			l = append(l, time.Since(start))
		}
		b.StopTimer()
		l.report(b)
	})
}

// BenchmarkScatter is one scatter until every frozen instance answered (freeze read included).
func BenchmarkScatter(b *testing.B) {
	for _, n := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("instances-%d", n), func(b *testing.B) {
			h := newHarness(b)
			for i := range n {
				h.start(fmt.Sprintf("inst-%02d", i))
			}
			c := h.client()
			ctx := context.Background()
			args := map[string]string{"text": "all"}
			if _, err := c.Describe(ctx, endpoint, ""); err != nil {
				b.Fatal(err)
			}
			var l latencies
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				res, err := c.Scatter(ctx, endpoint, "echo", args, ep.Timeout(5*time.Second))
				if err != nil {
					b.Fatal(err)
				}
				if !res.Complete {
					b.Fatalf("incomplete: %+v", res)
				}
				l = append(l, time.Since(start))
			}
			b.StopTimer()
			l.report(b)
		})
	}
}

// BenchmarkCallInterleaved alternates one cotal call and one bare
// request/reply, so a shared machine's load falls on both alike, and
// reports their p50s and the ratio: the figure the within-3x goal is
// about, steadier than two sub-benchmarks run one after the other.
func BenchmarkCallInterleaved(b *testing.B) {
	h := newHarness(b)
	h.start("inst-a")
	c := h.client()
	ctx := context.Background()
	args := map[string]string{"text": "ping"}
	if _, err := c.Call(ctx, endpoint, "echo", args); err != nil {
		b.Fatal(err)
	}
	srv := h.conn("raw server")
	if _, err := srv.Subscribe("raw.echo", func(m *nats.Msg) { _ = m.Respond(m.Data) }); err != nil {
		b.Fatal(err)
	}
	_ = srv.Flush()
	cli := h.conn("raw client")
	body := []byte(`{"text":"ping"}`)
	var cotal, raw latencies
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := c.Call(ctx, endpoint, "echo", args, ep.Timeout(5*time.Second)); err != nil {
			b.Fatal(err)
		}
		cotal = append(cotal, time.Since(start))
		start = time.Now()
		if _, err := cli.Request("raw.echo", body, 5*time.Second); err != nil {
			b.Fatal(err)
		}
		raw = append(raw, time.Since(start))
	}
	b.StopTimer()
	c50, r50 := bench.Percentiles(cotal).P50, bench.Percentiles(raw).P50
	b.ReportMetric(c50, "cotal-p50-µs")
	b.ReportMetric(r50, "raw-p50-µs")
	if r50 > 0 {
		b.ReportMetric(c50/r50, "ratio")
	}
	b.ReportMetric(0, "ns/op")
}
