package tui

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// The tests below import broker/ only to stand up a real mesh; the tui
// package itself never does.

const testSpace = "dash"

// realMesh is an open-mode broker on a temp store and a free port.
type realMesh struct {
	b  *broker.Broker
	kv jetstream.KeyValue
}

func startMesh(tb testing.TB) *realMesh {
	tb.Helper()
	b, err := broker.Start(broker.Options{Paths: config.Paths{Space: testSpace, StoreDir: tb.TempDir()}, Open: true, Sync: config.SyncInterval})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(b.Shutdown)
	nc, err := b.Internal()
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := broker.Provision(ctx, nc, testSpace, true, 0); err != nil {
		tb.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(ctx, wire.PresenceBucket(testSpace))
	if err != nil {
		tb.Fatal(err)
	}
	return &realMesh{b: b, kv: kv}
}

// endpoint connects name over TCP, as the dashboard does.
func (m *realMesh) endpoint(tb testing.TB, name string) *mesh.Endpoint {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := mesh.Connect(ctx, mesh.Options{URL: m.b.URL(), Space: testSpace, Name: name, OneShot: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// writers starts n presence writers; a share of them work or wait.
func (m *realMesh) writers(tb testing.TB, ctx context.Context, n int) []*presence.Writer {
	tb.Helper()
	ws := make([]*presence.Writer, n)
	for i := range n {
		name := fmt.Sprintf("peer%04d", i)
		card := presence.Card{ID: "local." + name, Name: name, Kind: presence.KindAgent, Owner: "local", Actor: name, ProtocolVersion: presence.ProtocolVersion}
		w := presence.NewWriter(m.kv, card, wire.NewLifecycleUID())
		if err := w.Start(ctx); err != nil {
			tb.Fatal(err)
		}
		switch i % 7 {
		case 0, 1:
			_ = w.Set(presence.Working, "task")
		case 2:
			_ = w.Set(presence.Waiting, "approval")
		}
		ws[i] = w
	}
	return ws
}

// dashboard is the operator side: the endpoint joined to every channel
// and its watcher, as Run prepares them.
func dashboard(tb testing.TB, m *realMesh) (*mesh.Endpoint, mesh.RosterView) {
	tb.Helper()
	e := m.endpoint(tb, "operator")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.Join(ctx, ">"); err != nil {
		tb.Fatal(err)
	}
	w, err := e.Watcher(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return e, w
}

func TestCollectorSendsOneBatchPerTick(t *testing.T) {
	m := startMesh(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, w := dashboard(t, m)
	m.writers(t, ctx, 20)
	poster := m.endpoint(t, "poster")

	var mu sync.Mutex
	var batches []batchMsg
	c := &collector{items: e.Next, w: w, tick: 50 * time.Millisecond, send: func(msg tea.Msg) {
		mu.Lock()
		batches = append(batches, msg.(batchMsg))
		mu.Unlock()
	}}
	start := time.Now()
	go c.run(ctx, e)
	const posts = 200
	for i := range posts {
		if _, err := poster.Send(ctx, fmt.Sprintf("ch%d", i%3), fmt.Sprintf("post %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	testutil.WaitFor(t, 10*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		got, peers := 0, 0
		n = len(batches)
		for _, b := range batches {
			got += b.Count
			if b.PeersChanged {
				peers = len(b.Peers)
			}
		}
		if got != posts || peers != 20 {
			return fmt.Errorf("the batches counted %d of %d posts and %d of 20 peers", got, posts, peers)
		}
		return nil
	})
	// Never more than one batch per tick (plus one for rounding).
	if limit := int(time.Since(start)/c.tick) + 1; n > limit {
		t.Errorf("%d batches in %s at a %s tick: more than one per tick", n, time.Since(start), c.tick)
	}
}

// BenchmarkDashboardLoad measures the dashboard under 1000 peers
// heartbeating (a share changing status every second) and 100 channel
// posts per second, next to the same collection without the UI, in one
// run on one broker. Each iteration is loadSpan of load; the figures are
// per second of load, for the whole process (broker and load generator
// included: only the difference between the two means anything).
//
//	go test -run XXX -bench Dashboard -benchtime 3x ./tui
func BenchmarkDashboardLoad(b *testing.B) {
	const (
		peers    = 1000
		perSec   = 100
		loadSpan = 2 * time.Second
	)
	m := startMesh(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ws := m.writers(b, ctx, peers)
	poster := m.endpoint(b, "loadgen")
	go func() { // status churn: 10 peers a second change status
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				st := []presence.Status{presence.Idle, presence.Working, presence.Waiting}[i%3]
				_ = ws[(i*37)%peers].Set(st, fmt.Sprintf("step %d", i))
			}
		}
	}()
	var sent atomic.Int64
	go func() {
		t := time.NewTicker(time.Second / perSec)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := poster.Send(ctx, fmt.Sprintf("ch%d", i%5), fmt.Sprintf("load post %d", i%20)); err == nil {
					sent.Add(1)
				}
			}
		}
	}()

	for _, arm := range []string{"collector-only", "dashboard"} {
		b.Run(arm, func(b *testing.B) {
			e, w := dashboard(b, m)
			actx, acancel := context.WithCancel(ctx)
			defer acancel()
			var batches atomic.Int64
			send := func(tea.Msg) { batches.Add(1) }
			var p *tea.Program
			if arm == "dashboard" {
				model := newModel(Config{Space: testSpace, Hosting: true, Mode: "open", Sync: "interval", Endpoint: e}, NewStyles(lipglossDiscard()), e, alerts{})
				p = tea.NewProgram(model, tea.WithInput(nil), tea.WithOutput(discard{}), tea.WithoutSignalHandler(), tea.WithContext(actx))
				go func() { _, _ = p.Run() }()
				p.Send(tea.WindowSizeMsg{Width: 160, Height: 50})
				send = func(msg tea.Msg) { batches.Add(1); p.Send(msg) }
			}
			c := &collector{items: e.Next, w: w, tick: DefaultTick, send: send}
			go c.run(actx, e)
			// Measure only once the roster holds every peer and a batch has
			// reached the program.
			testutil.WaitFor(b, 30*time.Second, func() error {
				if n := len(w.Roster()); n < peers || batches.Load() == 0 {
					return fmt.Errorf("%d of %d peers on the roster, %d batches", n, peers, batches.Load())
				}
				return nil
			})
			b.ResetTimer()
			batches0 := batches.Load()
			var cpu time.Duration
			var alloc uint64
			var heap uint64
			posts0 := sent.Load()
			for range b.N {
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				c0 := cpuTime()
				time.Sleep(loadSpan) // the measurement window itself: CPU and allocation over loadSpan of load
				cpu += cpuTime() - c0
				runtime.ReadMemStats(&ms1)
				alloc += ms1.TotalAlloc - ms0.TotalAlloc
				heap = max(heap, ms1.HeapInuse)
			}
			b.StopTimer()
			secs := (time.Duration(b.N) * loadSpan).Seconds()
			b.ReportMetric(float64(cpu.Milliseconds())/secs, "cpu-ms/s")
			b.ReportMetric(float64(alloc)/secs/1e6, "alloc-MB/s")
			b.ReportMetric(float64(heap)/1e6, "heap-MB")
			b.ReportMetric(float64(sent.Load()-posts0)/secs, "posts/s")
			b.ReportMetric(float64(batches.Load()-batches0)/secs, "batches/s")
			b.ReportMetric(0, "ns/op")
			acancel()
			if p != nil {
				p.Kill()
			}
		})
	}
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// discard is an output the renderer writes whole frames to.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
