package seat_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sys/unix"

	"github.com/cotal-go/cotal/bench"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
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
	st := bench.Percentiles(l) // as cotal bench reports them
	b.ReportMetric(st.P50, prefix+"p50-µs")
	b.ReportMetric(st.P99, prefix+"p99-µs")
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
			subj, err := proto.GoalResultSubject(space, wire.ManagerEndpoint, h.caller, goalID)
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
			r, err := h.c.Call(context.Background(), wire.ManagerEndpoint, "spawn", client.SpawnArgs{Persona: "shell"},
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
			var acc client.SpawnAccepted
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

// BenchmarkInputToScreen is the input command until the screen command,
// waiting at the manager, shows the output, next to pty.Paste until pty.Screen shows it (looked at
// after each output chunk).
func BenchmarkInputToScreen(b *testing.B) {
	b.Run("manager", func(b *testing.B) {
		h := startMesh(b, 10*time.Second)
		h.persona("shell", "sh", nil, nil)
		acc := h.ready("shell")
		// Addressed by its lifecycle, as a client holding its row does.
		seat := client.Seat{Name: acc.Name, Manager: h.iid, Owner: acc.Owner, UID: acc.UID, Any: true}
		var l latencies
		b.ResetTimer()
		for i := range b.N {
			cmd, want := markerCommand(i)
			start := time.Now()
			if _, err := mgr(h.c).Input(ctxT(b), seat, cmd, true); err != nil {
				b.Fatal(err)
			}
			r, err := mgr(h.c).ScreenUntil(ctxT(b), seat, want, 5*time.Second)
			if err != nil || r.Matched == nil || !*r.Matched {
				b.Fatalf("no %s on screen: %v", want, err)
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
			// Look again after each chunk of output, and every 100µs since
			// the emulator draws a little behind the output.
			deadline := time.After(5 * time.Second)
			for !strings.Contains(s.Screen(), want) {
				select {
				case <-out:
				case <-time.After(100 * time.Microsecond):
				case <-deadline:
					b.Fatalf("no %s on screen", want)
				}
			}
			l = append(l, time.Since(start))
		}
		b.StopTimer()
		l.report(b, "")
	})
}

// benchReaderEnv makes this test binary the agent of the injection
// benchmark: it reads its terminal and, for each injected marker line,
// prints when it read it.
const benchReaderEnv = "COTAL_BENCH_READER"

// benchStampsEnv names the file the reader also appends its stamps to, so
// the benchmark reads them without asking for the seat's screen: the
// screens it would render per message make garbage whose collection then
// lands in the measured path.
const benchStampsEnv = "COTAL_BENCH_STAMPS"

// benchReader prints "got <marker> at <unix ns>" for every line of its
// terminal holding a marker (the echo of what was typed never starts with
// "got"), and appends the same line to the stamps file when there is one.
func benchReader() {
	var stamps *os.File
	if path := os.Getenv(benchStampsEnv); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Println("reader: cannot open its stamps file:", err)
			os.Exit(1)
		}
		stamps = f
	}
	// No echo: only the reader's own lines are drawn, so a stamp is never
	// run together with the echo of the next block.
	if t, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil {
		t.Lflag &^= unix.ECHO
		_ = unix.IoctlSetTermios(0, unix.TCSETS, t)
	}
	fmt.Println("reader ready")
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if i := strings.Index(sc.Text(), "mark-"); i >= 0 {
			at := time.Now().UnixNano()
			tok, _, _ := strings.Cut(sc.Text()[i:], " ")
			fmt.Printf("got %s at %d\n", tok, at)
			if stamps != nil {
				fmt.Fprintf(stamps, "got %s at %d\n", tok, at)
			}
		}
	}
}

// waitStamp waits for the reader's stamp of marker in its stamps file. It
// only reads the file: looking at the screen while the next DM is on its
// way would load the box it measures.
func waitStamp(b *testing.B, stamps, marker string) int64 {
	b.Helper()
	var at int64
	testutil.WaitFor(b, 10*time.Second, func() error {
		text, _ := os.ReadFile(stamps)
		if at = readAt(string(text), marker); at == 0 {
			return fmt.Errorf("no stamp of %s in the reader's %s", marker, stamps)
		}
		return nil
	})
	return at
}

// readAt finds when the reader got marker in text, 0 when not yet.
func readAt(text, marker string) int64 {
	_, rest, ok := strings.Cut(text, "got "+marker+" at ")
	if !ok {
		return 0
	}
	digits := rest
	if i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		digits = rest[:i]
	}
	if len(digits) < 19 { // the line is not fully drawn yet
		return 0
	}
	n, _ := strconv.ParseInt(digits, 10, 64)
	return n
}

// BenchmarkDMToPty is a peer's DM until the seat's agent read the injected
// line off its terminal, next to the same hand-over done by hand: a
// JetStream publish to a stream, its push consumer writing the same framed
// block into the pty of the same reader (pty.Paste), and the ack. Both
// readers stamp the moment they read the line; the figure is that stamp
// minus the publish start.
func BenchmarkDMToPty(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("seat", func(b *testing.B) {
		h := startMesh(b, 10*time.Second)
		stamps := filepath.Join(h.project, "stamps")
		body := fmt.Sprintf("---\nname: reader\nagent: command\ncommand: %q\ninject: true\nenv: {%s: \"1\", %s: %q}\n---\n", self, benchReaderEnv, benchStampsEnv, stamps)
		if err := os.MkdirAll(config.AgentsDir(h.project), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(config.AgentsDir(h.project), "reader.md"), []byte(body), 0o600); err != nil {
			b.Fatal(err)
		}
		acc := h.ready("reader")
		bob := h.peer(b, "bob", nil)
		w, err := bob.WatchReceipts()
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		var l latencies
		b.ResetTimer()
		for i := range b.N {
			marker := fmt.Sprintf("mark-%d", i)
			start := time.Now()
			r, err := bob.DM(context.Background(), acc.Name, marker)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			// The reader's stamp is the figure. Look for it only once the
			// receipt says the DM was injected and acked, so the looking
			// does not load the box while it measures.
			wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if p := w.Wait(wctx, r.ID, wire.RungAcked, 1, nil); !p[0].Injected || p[0].Reached != wire.RungAcked {
				b.Fatalf("the receipt of %s: %+v", marker, p)
			}
			cancel()
			at := waitStamp(b, stamps, marker)
			l = append(l, time.Duration(at-start.UnixNano()))
			b.StartTimer()
		}
		b.StopTimer()
		l.report(b, "")
	})
	b.Run("raw", func(b *testing.B) {
		h := startMesh(b, 10*time.Second)
		js, err := jetstream.New(h.op)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BENCH_RAW", Subjects: []string{"benchraw.>"}})
		if err != nil {
			b.Fatal(err)
		}
		cons, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "r", AckPolicy: jetstream.AckExplicitPolicy})
		if err != nil {
			b.Fatal(err)
		}
		stamps := filepath.Join(b.TempDir(), "stamps")
		s, err := pty.Start(ctx, pty.Config{Path: self, Env: append(os.Environ(), benchReaderEnv+"=1", benchStampsEnv+"="+stamps)})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		out, stop := s.Subscribe()
		defer stop()
		started := time.After(10 * time.Second)
		for !strings.Contains(s.Screen(), "reader ready") {
			select {
			case <-out:
			case <-time.After(time.Millisecond): // the emulator draws behind the output
			case <-started:
				b.Fatal("the reader did not start")
			}
		}
		acked := make(chan struct{}, 1)
		cc, err := cons.Consume(func(m jetstream.Msg) {
			block := render.Block([]string{"[DM from bob] " + string(m.Data())}, nil)
			if _, err := s.Paste(block, true); err == nil && m.DoubleAck(ctx) == nil {
				acked <- struct{}{}
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		defer cc.Stop()
		var l latencies
		b.ResetTimer()
		for i := range b.N {
			marker := fmt.Sprintf("mark-%d", i)
			start := time.Now()
			if _, err := js.Publish(ctx, "benchraw.x", []byte(marker)); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			// As in the seat run: look for the stamp once the hand-over is
			// acked, so both runs go on to the next DM alike.
			select {
			case <-acked:
			case <-time.After(10 * time.Second):
				b.Fatalf("%s was never acked", marker)
			}
			at := waitStamp(b, stamps, marker)
			l = append(l, time.Duration(at-start.UnixNano()))
			b.StartTimer()
		}
		b.StopTimer()
		l.report(b, "")
	})
}
