package mesh_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/bench"
	"github.com/cotal-go/cotal/mesh"
)

// The benchmarks put the endpoint next to a raw nats.go baseline on the
// same broker in the same run (the machines are shared and noisy, so only
// the ratio means anything):
//
//	go test -run XXX -bench . -benchtime 2000x ./mesh

// latencies collects per-operation durations and reports percentiles.
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

// BenchmarkDMLatency is publish-to-handover of a DM: the sender's Send
// until the recipient's Next returns it (its ack outside the measure).
func BenchmarkDMLatency(b *testing.B) {
	b.Run("cotal", func(b *testing.B) {
		h := newBenchHarness(b)
		pathA, _ := h.mint(alice)
		a := h.connect(pathA, mesh.Options{})
		s := h.agentEndpoint(agent{name: "sender"}, mesh.Options{OneShot: true})
		ctx := context.Background()
		var l latencies
		b.ResetTimer()
		for range b.N {
			start := time.Now()
			if _, err := s.DM(ctx, "local.alice", "ping"); err != nil {
				b.Fatal(err)
			}
			it, err := a.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			l = append(l, time.Since(start))
			b.StopTimer()
			_ = it.Ack()
			b.StartTimer()
		}
		b.StopTimer()
		l.report(b)
	})
	b.Run("raw-nats", func(b *testing.B) {
		h := newBenchHarness(b)
		ctx := context.Background()
		// Same settings as the DM stream: file storage, 2 min dedup.
		if _, err := h.js.CreateStream(ctx, jetstream.StreamConfig{
			Name: "RAWDM", Subjects: []string{"raw.dm.>"}, Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
		}); err != nil {
			b.Fatal(err)
		}
		recvNC, err := nats.Connect(h.b.URL(), nats.UserCredentials(h.operatorCreds(b)))
		if err != nil {
			b.Fatal(err)
		}
		defer recvNC.Close()
		rjs, _ := jetstream.New(recvNC)
		cons, err := rjs.CreateOrUpdateConsumer(ctx, "RAWDM", jetstream.ConsumerConfig{
			Durable: "dm_raw", FilterSubject: "raw.dm.alice.>", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute,
		})
		if err != nil {
			b.Fatal(err)
		}
		got := make(chan jetstream.Msg, 1)
		cc, err := cons.Consume(func(m jetstream.Msg) { got <- m }, jetstream.PullMaxMessages(64))
		if err != nil {
			b.Fatal(err)
		}
		defer cc.Stop()
		sendNC, err := nats.Connect(h.b.URL(), nats.UserCredentials(h.operatorCreds(b)))
		if err != nil {
			b.Fatal(err)
		}
		defer sendNC.Close()
		sjs, _ := jetstream.New(sendNC)
		body := []byte(envelope("x", "local.sender", `"to":"local.alice"`))
		var l latencies
		b.ResetTimer()
		for i := range b.N {
			start := time.Now()
			if _, err := sjs.Publish(ctx, "raw.dm.alice.sender", body, jetstream.WithMsgID(strconv.Itoa(i))); err != nil {
				b.Fatal(err)
			}
			m := <-got
			l = append(l, time.Since(start))
			b.StopTimer()
			_ = m.DoubleAck(ctx)
			b.StartTimer()
		}
		b.StopTimer()
		l.report(b)
	})
}

// BenchmarkFanout is one live channel post until every member has it in
// hand, for 1, 10 and 100 members, each on its own connection.
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("members=%d/cotal", n), func(b *testing.B) {
			h := newBenchHarness(b)
			members := make([]*mesh.Endpoint, n)
			for i := range members {
				members[i] = h.agentEndpoint(agent{name: "m" + strconv.Itoa(i), subscribe: []string{"team"}}, mesh.Options{})
			}
			s := h.agentEndpoint(agent{name: "sender", allowPub: []string{"team"}}, mesh.Options{OneShot: true})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// One long-lived reader per member, as a connector would run,
			// so the measure is delivery, not goroutine start-up.
			got := make(chan struct{}, n)
			for _, m := range members {
				go func() {
					for {
						if _, err := m.Next(ctx); err != nil {
							return
						}
						got <- struct{}{}
					}
				}()
			}
			var l latencies
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if _, err := s.Send(ctx, "team", "hello"); err != nil {
					b.Fatal(err)
				}
				for range n {
					<-got
				}
				l = append(l, time.Since(start))
			}
			b.StopTimer()
			l.report(b)
		})
		b.Run(fmt.Sprintf("members=%d/raw-nats", n), func(b *testing.B) {
			h := newBenchHarness(b)
			ctx := context.Background()
			if _, err := h.js.CreateStream(ctx, jetstream.StreamConfig{
				Name: "RAWCHAT", Subjects: []string{"raw.chat.>"}, Storage: jetstream.FileStorage,
				MaxMsgsPerSubject: 1000, Discard: jetstream.DiscardOld, Duplicates: 2 * time.Minute,
			}); err != nil {
				b.Fatal(err)
			}
			chans := make([]chan struct{}, n)
			for i := range chans {
				nc, err := nats.Connect(h.b.URL(), nats.UserCredentials(h.operatorCreds(b)))
				if err != nil {
					b.Fatal(err)
				}
				defer nc.Close()
				ch := make(chan struct{}, 1)
				chans[i] = ch
				if _, err := nc.Subscribe("raw.chat.*.*.team", func(*nats.Msg) { ch <- struct{}{} }); err != nil {
					b.Fatal(err)
				}
				if err := nc.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			sendNC, err := nats.Connect(h.b.URL(), nats.UserCredentials(h.operatorCreds(b)))
			if err != nil {
				b.Fatal(err)
			}
			defer sendNC.Close()
			sjs, _ := jetstream.New(sendNC)
			body := []byte(envelope("x", "local.sender", `"channel":"team"`))
			var l latencies
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if _, err := sjs.Publish(ctx, "raw.chat.local.sender.team", body, jetstream.WithMsgID(strconv.Itoa(i))); err != nil {
					b.Fatal(err)
				}
				for _, ch := range chans {
					<-ch
				}
				l = append(l, time.Since(start))
			}
			b.StopTimer()
			l.report(b)
		})
	}
}

// newBenchHarness is newHarness for a benchmark: the same production
// broker, auth mode, SyncAlways.
func newBenchHarness(b *testing.B) *harness {
	b.Helper()
	return newHarnessTB(b, false)
}

// operatorCreds mints an operator-profile creds file for baseline clients,
// so the baseline pays the same authenticated-connection costs.
func (h *harness) operatorCreds(tb testing.TB) string {
	tb.Helper()
	if h.opCreds != "" {
		return h.opCreds
	}
	c, err := h.b.Authority().Mint(operatorIdentity())
	if err != nil {
		tb.Fatal(err)
	}
	path := tb.TempDir() + "/op.creds"
	if err := writeCreds(path, c); err != nil {
		tb.Fatal(err)
	}
	h.opCreds = path
	return path
}

// BenchmarkConnect is an agent's endpoint connecting (it describes the
// delivery service and checks its contracts) until it is ready, then
// closed outside the measure, next to a bare authenticated nats.Connect of
// the same credential:
//
//	go test -run XXX -bench Connect -benchtime 200x ./mesh
func BenchmarkConnect(b *testing.B) {
	h := newBenchHarness(b)
	creds, _ := h.mint(agent{name: "comer", subscribe: []string{"team"}})
	b.Run("cotal", func(b *testing.B) {
		var l latencies
		for range b.N {
			start := time.Now()
			e, err := mesh.Connect(context.Background(), mesh.Options{URL: h.b.URL(), Creds: creds, OneShot: true})
			if err != nil {
				b.Fatal(err)
			}
			l = append(l, time.Since(start))
			b.StopTimer()
			_ = e.Close()
			b.StartTimer()
		}
		b.StopTimer()
		l.report(b)
	})
	b.Run("raw-nats", func(b *testing.B) {
		var l latencies
		for range b.N {
			start := time.Now()
			nc, err := nats.Connect(h.b.URL(), nats.UserCredentials(creds))
			if err != nil {
				b.Fatal(err)
			}
			l = append(l, time.Since(start))
			b.StopTimer()
			nc.Close()
			b.StartTimer()
		}
		b.StopTimer()
		l.report(b)
	})
}
