package attach_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cpty "github.com/creack/pty"
	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/seat/attach"
)

func pct(lat []time.Duration, p float64) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// rawPty runs args in a bare creack/pty and delivers its output.
func rawPty(b *testing.B, args ...string) (*os.File, <-chan []byte) {
	b.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TERM=xterm-256color"}
	ptmx, err := cpty.StartWithSize(cmd, &cpty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		b.Fatal(err)
	}
	out := make(chan []byte, 1024)
	go func() {
		defer close(out)
		buf := make([]byte, 16<<10)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				out <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				return
			}
		}
	}()
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = ptmx.Close()
		for range out {
		}
	})
	return ptmx, out
}

// echoCmd echoes every byte typed at once.
var echoCmd = []string{"sh", "-c", "stty raw -echo; echo ready; exec cat"}

func waitBytes(b *testing.B, ch <-chan []byte, want byte) {
	for {
		select {
		case p, ok := <-ch:
			if !ok {
				b.Fatal("output ended")
			}
			if bytes.IndexByte(p, want) >= 0 {
				return
			}
		case <-time.After(5 * time.Second):
			b.Fatalf("no %q echoed", want)
		}
	}
}

// BenchmarkKeystrokeEcho is a key typed by an attached holder until its
// echo reaches the holder, next to what it is built from, measured
// interleaved in the same run: a core NATS request/reply between the same
// two connections, and a raw pty write until the echo is read. ratio-p50
// is attach / (request-reply + raw pty).
func BenchmarkKeystrokeEcho(b *testing.B) {
	m := startMesh(b, attach.RegistryOptions{})
	seat := startSeat(b, 80, 24, echoCmd...)
	got := make(chan []byte, 1024)
	nc := m.conn()
	a := m.attachTo(seat, "echo", testHolder("alice"), nc, 80, 24, func(o *attach.ClientOptions, _ *screen) {
		o.OnData = func(p []byte) { got <- p }
	})
	waitBytes(b, got, 'y') // "ready" in the first screen

	// The same two connections answer a core request.
	rsub, err := m.server.Subscribe("bench.echo", func(msg *nats.Msg) { _ = msg.Respond(msg.Data) })
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rsub.Unsubscribe() })
	_ = m.server.Flush()

	ptmx, raw := rawPty(b, echoCmd...)
	waitBytes(b, raw, 'y')

	var tAttach, tReq, tPty []time.Duration
	ctx := testmesh.Ctx(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		key := byte('a' + i%26)

		t0 := time.Now()
		if err := a.client.Keys(ctx, []byte{key}); err != nil {
			b.Fatal(err)
		}
		waitBytes(b, got, key)
		tAttach = append(tAttach, time.Since(t0))

		t0 = time.Now()
		if _, err := nc.Request("bench.echo", []byte{key}, 5*time.Second); err != nil {
			b.Fatal(err)
		}
		tReq = append(tReq, time.Since(t0))

		t0 = time.Now()
		if _, err := ptmx.Write([]byte{key}); err != nil {
			b.Fatal(err)
		}
		waitBytes(b, raw, key)
		tPty = append(tPty, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(us(pct(tAttach, .5)), "attach-p50-µs")
	b.ReportMetric(us(pct(tAttach, .99)), "attach-p99-µs")
	b.ReportMetric(us(pct(tReq, .5)), "reqreply-p50-µs")
	b.ReportMetric(us(pct(tReq, .99)), "reqreply-p99-µs")
	b.ReportMetric(us(pct(tPty, .5)), "rawpty-p50-µs")
	b.ReportMetric(us(pct(tPty, .99)), "rawpty-p99-µs")
	b.ReportMetric(float64(pct(tAttach, .5))/float64(pct(tReq, .5)+pct(tPty, .5)), "ratio-p50")
	b.ReportMetric(float64(pct(tAttach, .99))/float64(pct(tReq, .99)+pct(tPty, .99)), "ratio-p99")
}

// floodBytes is what one throughput round writes: 79-character lines, so
// the seat's emulator, which all three paths but the raw one pay for, is
// not dominated by line feeds.
const floodBytes = 8 << 20

var floodLine = "yes 0123456789012345678901234567890123456789012345678901234567890123456789012345678 | head -c " + fmt.Sprint(floodBytes)

// BenchmarkOutputThroughput is one seat's flood received by an attached
// holder that keeps up, next to the same flood read from a bare pty and
// from the seat itself (which mirrors it into its emulator), interleaved
// in one run. Throughput is bytes the reader got per second of the flood;
// the holder's share is what arrived without being dropped.
func BenchmarkOutputThroughput(b *testing.B) {
	m := startMesh(b, attach.RegistryOptions{})
	var rawT, seatT, attT time.Duration
	var rawN, seatN, attN, dropped int64
	for i := 0; i < b.N; i++ {
		// Bare pty.
		t0 := time.Now()
		_, raw := rawPty(b, "sh", "-c", floodLine)
		for p := range raw {
			rawN += int64(len(p))
		}
		rawT += time.Since(t0)

		// The seat, read through its own subscription.
		s := startSeat(b, 80, 24, "sh", "-c", "stty -echo; echo ready; read go; "+floodLine)
		waitReady(b, s)
		ch, cancel := s.Subscribe()
		t0 = time.Now()
		_, _ = s.Write([]byte("\r"))
		for p := range ch {
			seatN += int64(len(p))
		}
		seatT += time.Since(t0)
		cancel()

		// An attached holder.
		s = startSeat(b, 80, 24, "sh", "-c", "stty -echo; echo ready; read go; "+floodLine)
		waitReady(b, s)
		var n atomic.Int64
		first := make(chan struct{})
		var once sync.Once
		a := m.attachTo(s, "flood", testHolder("alice"), m.conn(), 80, 24, func(o *attach.ClientOptions, _ *screen) {
			o.OnData = func(p []byte) {
				n.Add(int64(len(p)))
				once.Do(func() { close(first) })
			}
		})
		<-first // the first screen
		n.Store(0)
		t0 = time.Now()
		_, _ = s.Write([]byte("\r"))
		<-a.client.Done()
		attT += time.Since(t0)
		attN += n.Load()
		dropped += a.server.Stats().Dropped
	}
	mbps := func(n int64, d time.Duration) float64 { return float64(n) / d.Seconds() / 1e6 }
	b.ReportMetric(mbps(rawN, rawT), "rawpty-MB/s")
	b.ReportMetric(mbps(seatN, seatT), "seat-MB/s")
	b.ReportMetric(mbps(attN, attT), "attach-MB/s")
	b.ReportMetric(100*float64(dropped)/float64(attN+dropped), "attach-dropped-%")
	b.ReportMetric(mbps(attN, attT)/mbps(rawN, rawT), "ratio-vs-rawpty")
	b.ReportMetric(mbps(attN, attT)/mbps(seatN, seatT), "ratio-vs-seat")
}

// BenchmarkSessionMemory is the heap one attached session holds, both of
// its sides together (the serving side's rail, output state and seat
// subscription; the holder's rail), measured over 64 sessions on one seat.
func BenchmarkSessionMemory(b *testing.B) {
	const n = 64
	m := startMesh(b, attach.RegistryOptions{MaxSessions: n})
	seat := startSeat(b, 80, 24, "sh")
	nc := m.conn()
	var perSession, goroutines float64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		var all []*attached
		for j := 0; j < n; j++ {
			h := testHolder(fmt.Sprintf("h%d", j))
			g, srv := m.serveRaw(seat, h)
			c, err := attach.Dial(testmesh.Ctx(b), nc, g, attach.ClientOptions{Cols: 80, Rows: 24, OnData: func([]byte) {}})
			if err != nil {
				b.Fatal(err)
			}
			all = append(all, &attached{grant: g, server: srv, client: c})
		}
		testutil.WaitFor(b, 10*time.Second, func() error {
			for _, a := range all {
				if a.server.Stats().Repaints == 0 {
					return fmt.Errorf("a session has not sent its first screen")
				}
			}
			return nil
		})
		runtime.GC()
		runtime.ReadMemStats(&after)
		perSession = float64(after.HeapInuse+after.StackInuse-before.HeapInuse-before.StackInuse) / n
		goroutines = float64(runtime.NumGoroutine()-g0) / n
		b.StopTimer()
		for _, a := range all {
			a.client.Close()
			<-a.server.Done()
		}
		b.StartTimer()
	}
	b.ReportMetric(perSession/1024, "KiB/session")
	b.ReportMetric(goroutines, "goroutines/session")
}
