package seat_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cpty "github.com/creack/pty"
	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat/attach"
	"github.com/cotal-go/cotal/seat/attach/tty"
	"github.com/cotal-go/cotal/seat/client"
)

// The attach benchmarks go through the manager as `cotal attach` does: a
// client on its own TCP connection with the operator's creds asks the
// manager for a grant and dials it. Each figure stands next to what it is
// built from, measured interleaved in the same run:
//
//	go test -run XXX -bench Attach -benchtime 200x ./seat

// echoArgs make a seat that echoes every byte at once.
var echoArgs = []string{"-c", "stty raw -echo; echo ready; exec cat"}

// tcpClient is a manager client over its own loopback TCP connection as
// the operator, like any CLI command.
func (h *harness) tcpClient() (*nats.Conn, *client.Client) {
	h.t.Helper()
	nc, err := nats.Connect(h.m.Broker().URL(), nats.UserCredentials(h.paths.OperatorCreds()))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(nc.Close)
	return nc, client.New(h.client(nc, h.caller))
}

// spawnReady spawns persona under name and waits until it is up.
func spawnReady(b *testing.B, h *harness, persona, name string) client.Seat {
	b.Helper()
	acc := mustSpawn(b, h.c, h.iid, client.SpawnArgs{Persona: persona, Name: name})
	if res := goal(b, h.c, h.iid, acc.GoalID, 20*time.Second); res.State != ep.GoalSucceeded {
		b.Fatalf("spawn %s: %s %+v", name, res.State, res.Error)
	}
	return client.Seat{Name: acc.Name, Manager: h.iid}
}

// chunks is a session's output as it arrives.
type chunks chan []byte

func (c chunks) write(p []byte) { c <- bytes.Clone(p) }

// waitFor reads until a chunk holds want.
func (c chunks) waitFor(b *testing.B, want string) {
	b.Helper()
	var seen strings.Builder
	timeout := time.After(10 * time.Second)
	for {
		select {
		case p := <-c:
			seen.Write(p)
			if strings.Contains(seen.String(), want) {
				return
			}
		case <-timeout:
			b.Fatalf("no %q in %q", want, seen.String())
		}
	}
}

func attachVia(b *testing.B, nc *nats.Conn, mc *client.Client, s client.Seat, out chunks) *attach.Client {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := mc.Attach(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	g, err := attach.ParseGrant(raw)
	if err != nil {
		b.Fatal(err)
	}
	c, err := attach.Dial(ctx, nc, g, attach.ClientOptions{Cols: 80, Rows: 24, OnData: out.write})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// rawEcho is the same echo in a bare creack/pty.
func rawEcho(b *testing.B, args ...string) (*os.File, chunks) {
	b.Helper()
	cmd := exec.Command("sh", args...)
	ptmx, err := cpty.StartWithSize(cmd, &cpty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		b.Fatal(err)
	}
	out := make(chunks, 4096)
	go func() {
		defer close(out)
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				out <- bytes.Clone(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = ptmx.Close() })
	return ptmx, out
}

func pctl(l []time.Duration, p float64) time.Duration {
	s := slices.Clone(l)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// BenchmarkAttachKeystrokeEcho is a key typed until its echo is seen:
// by an attach client through the manager, by `cotal attach`'s own loop
// (a person's pty in, the same pty out), next to a core NATS
// request/reply between two TCP connections and a raw pty write until
// its echo is read. ratio-p50 is attach / (request-reply + raw pty).
func BenchmarkAttachKeystrokeEcho(b *testing.B) {
	h := startMesh(b, 10*time.Second)
	h.persona("echo", "sh", echoArgs, nil)
	s := spawnReady(b, h, "echo", "echo")
	nc, mc := h.tcpClient()
	got := make(chunks, 4096)
	c := attachVia(b, nc, mc, s, got)
	got.waitFor(b, "ready")

	// The person's terminal for the full client: keys typed into its
	// master arrive at tty.Run on the tty side, which writes the echo
	// back there.
	ptmx, tt, err := cpty.Open()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tt.Close(); _ = ptmx.Close() })
	_ = cpty.Setsize(ptmx, &cpty.Winsize{Cols: 80, Rows: 24})
	screen := make(chunks, 4096)
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				screen <- bytes.Clone(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	nc2, mc2 := h.tcpClient()
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		_, _ = tty.Run(ctx, tty.Options{Name: "echo", In: tt, Out: tt}, tty.SeatOpener(func() (*client.Client, error) { return mc2, nil }, s, ""))
	}()
	b.Cleanup(func() { cancel(); <-runDone; nc2.Close() })
	screen.waitFor(b, "ready")

	responder, _ := h.tcpClient()
	rsub, err := responder.Subscribe("bench.echo", func(m *nats.Msg) { _ = m.Respond(m.Data) })
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rsub.Unsubscribe() })
	_ = responder.Flush()
	raw, rawOut := rawEcho(b, echoArgs...)
	rawOut.waitFor(b, "ready")

	var tAttach, tTTY, tReq, tPty []time.Duration
	kctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		key := string(rune('a' + i%26))

		t0 := time.Now()
		if err := c.Keys(kctx, []byte(key)); err != nil {
			b.Fatal(err)
		}
		got.waitFor(b, key)
		tAttach = append(tAttach, time.Since(t0))

		t0 = time.Now()
		if _, err := ptmx.Write([]byte(key)); err != nil {
			b.Fatal(err)
		}
		screen.waitFor(b, key)
		tTTY = append(tTTY, time.Since(t0))

		t0 = time.Now()
		if _, err := nc.Request("bench.echo", []byte(key), 5*time.Second); err != nil {
			b.Fatal(err)
		}
		tReq = append(tReq, time.Since(t0))

		t0 = time.Now()
		if _, err := raw.Write([]byte(key)); err != nil {
			b.Fatal(err)
		}
		rawOut.waitFor(b, key)
		tPty = append(tPty, time.Since(t0))
	}
	b.StopTimer()
	for _, m := range []struct {
		name string
		l    []time.Duration
	}{{"attach", tAttach}, {"cli", tTTY}, {"reqreply", tReq}, {"rawpty", tPty}} {
		b.ReportMetric(micros(pctl(m.l, .5)), m.name+"-p50-µs")
		b.ReportMetric(micros(pctl(m.l, .99)), m.name+"-p99-µs")
	}
	b.ReportMetric(float64(pctl(tAttach, .5))/float64(pctl(tReq, .5)+pctl(tPty, .5)), "ratio-p50")
	b.ReportMetric(float64(pctl(tAttach, .99))/float64(pctl(tReq, .99)+pctl(tPty, .99)), "ratio-p99")
	b.ReportMetric(float64(pctl(tTTY, .5))/float64(pctl(tReq, .5)+pctl(tPty, .5)), "cli-ratio-p50")
	b.ReportMetric(0, "ns/op")
}

// floodBytes is one flood: 79-character lines, so the seat's emulator,
// which all but the bare pty pay for, is not dominated by line feeds.
const floodBytes = 8_000_000

// floodArgs flood once told to go, timing the flood from inside.
var floodArgs = []string{"-c", fmt.Sprintf("stty -echo; echo ready; read go; s=$(date +%%s%%N); yes %s | head -c %d; e=$(date +%%s%%N); echo FLOODMS $(( (e-s)/1000000 ))", strings.Repeat("0", 78), floodBytes)}

var floodMsRe = regexp.MustCompile(`FLOODMS (\d+)`)

// floodMs reads the flood's own timing from what c has shown.
func (c chunks) floodMs(b *testing.B) int {
	b.Helper()
	var seen []byte
	for p := range c {
		seen = append(seen, p...)
		if m := floodMsRe.FindSubmatch(seen[max(len(seen)-4096, 0):]); m != nil {
			ms, _ := strconv.Atoi(string(m[1]))
			return max(ms, 1)
		}
	}
	b.Fatal("the flood's output ended without its timing")
	return 0
}

// BenchmarkAttachThroughput is a seat's flood with an attach client
// through the manager that keeps up, next to the same flood in a bare pty
// and in a seat nobody is attached to, interleaved; each is timed inside
// the pty, so the figure is what the attached client costs the seat. The
// seat's emulator costs tens of µs a line: the seat alone is the ceiling.
func BenchmarkAttachThroughput(b *testing.B) {
	h := startMesh(b, 10*time.Second)
	h.persona("flood", "sh", floodArgs, nil)
	nc, mc := h.tcpClient()
	var rawMs, aloneMs, attMs int
	var got, dropped int64
	for i := 0; i < b.N; i++ {
		raw, rawOut := rawEcho(b, floodArgs...)
		rawOut.waitFor(b, "ready")
		_, _ = raw.Write([]byte("\r"))
		rawMs += rawOut.floodMs(b)

		alone := spawnReady(b, h, "flood", fmt.Sprintf("alone%d", i))
		sized := make(chunks, 64) // the attached seat's size: an emulator's cost a line grows with it
		sizer := attachVia(b, nc, mc, alone, sized)
		sized.waitFor(b, "ready")
		sizer.Close()
		if _, err := mc.Keys(context.Background(), alone, "Enter"); err != nil {
			b.Fatal(err)
		}
		var shot string
		tick := time.NewTicker(200 * time.Millisecond) // a light poll: the seat's own clock times it
		for m := []string(nil); m == nil; m = floodMsRe.FindStringSubmatch(shot) {
			<-tick.C
			r, err := mc.Screen(context.Background(), alone)
			if err != nil {
				b.Fatal(err)
			}
			shot = r.Screen
		}
		tick.Stop()
		ms, _ := strconv.Atoi(floodMsRe.FindStringSubmatch(shot)[1])
		aloneMs += max(ms, 1)

		s := spawnReady(b, h, "flood", fmt.Sprintf("flood%d", i))
		out := make(chunks, 4096)
		var n atomic.Int64
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rawGrant, err := mc.Attach(ctx, s)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		g, _ := attach.ParseGrant(rawGrant)
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		c, err := attach.Dial(ctx, nc, g, attach.ClientOptions{Cols: 80, Rows: 24, OnData: func(p []byte) {
			n.Add(int64(len(p)))
			out.write(p)
		}})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		out.waitFor(b, "ready")
		n.Store(0)
		if _, err := mc.Keys(context.Background(), s, "Enter"); err != nil {
			b.Fatal(err)
		}
		go func() { <-c.Done(); close(out) }()
		attMs += out.floodMs(b)
		for range out {
		}
		got += n.Load()
		dropped += c.Stats().Dropped
	}
	mbps := func(ms int) float64 { return float64(b.N) * floodBytes / 1e6 / (float64(ms) / 1e3) }
	b.ReportMetric(mbps(rawMs), "rawpty-MB/s")
	b.ReportMetric(mbps(aloneMs), "seat-alone-MB/s")
	b.ReportMetric(mbps(attMs), "attached-MB/s")
	b.ReportMetric(100*float64(dropped)/float64(got+dropped), "dropped-%")
	b.ReportMetric(mbps(attMs)/mbps(rawMs), "ratio-vs-rawpty")
	b.ReportMetric(mbps(attMs)/mbps(aloneMs), "ratio-vs-seat-alone")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkAttachSessionMemory is the heap and goroutines one session
// holds through the manager, both sides together (they share this
// process): the registry's entry, the serving side and the client,
// measured over 64 sessions on one seat.
func BenchmarkAttachSessionMemory(b *testing.B) {
	const n = 64
	h := startMesh(b, 10*time.Second)
	h.persona("shell", "sh", nil, nil)
	s := spawnReady(b, h, "shell", "shell")
	nc, mc := h.tcpClient()
	var perSession, goroutines float64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		var all []*attach.Client
		for range n {
			out := make(chunks, 64)
			c := attachVia(b, nc, mc, s, out)
			<-out // the first screen
			go func() {
				for range out {
				}
			}()
			all = append(all, c)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perSession = float64(after.HeapInuse+after.StackInuse-before.HeapInuse-before.StackInuse) / n
		goroutines = float64(runtime.NumGoroutine()-g0) / n
		b.StopTimer()
		for _, c := range all {
			c.Close()
		}
		waitFor(b, 10*time.Second, func() error {
			if r, _ := row(ps(b, h.c, h.iid), "shell"); len(r.Sessions) > 0 {
				return fmt.Errorf("%d sessions still live", len(r.Sessions))
			}
			return nil
		})
		b.StartTimer()
	}
	b.ReportMetric(perSession/1024, "KiB/session")
	b.ReportMetric(goroutines, "goroutines/session")
	b.ReportMetric(0, "ns/op")
}
