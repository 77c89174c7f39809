package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/modelserver"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// BenchmarkDMToAgent is a peer's DM until its agent has it, per harness
// (Claude Code, Codex, opencode): the model request that carries it
// (stamped by the scripted server's clock), after the seat's nudge and its
// prompt hook or plugin. Two floors are measured in the same mesh, taking
// turns with it so they share the machine's load: the same text typed
// straight into the harness's prompt by the operator (`input`, the path a
// person at the keys takes, no mesh delivery), and the same DM reaching
// the fake command seat through its terminal (it stamps the moment it
// reads the injected line). Each figure is its stamp minus the call's
// start, as p50 and p99; the ratios are the DM's over each floor.
//
//	go test -run XXX -bench DMToAgent -benchtime 20x ./e2e
func BenchmarkDMToAgent(b *testing.B) {
	if testing.Short() {
		b.Skip("runs the real harnesses; skipped under -short")
	}
	b.Run("claude", func(b *testing.B) {
		benchDMToAgent(b, "cc", func(b *testing.B) (string, []string, *modelserver.Server) {
			w := newClaudeWorld(b, map[string]any{}, true)
			return w.dir, w.env, w.srv
		})
	})
	b.Run("codex", func(b *testing.B) {
		benchDMToAgent(b, "cx", func(b *testing.B) (string, []string, *modelserver.Server) {
			w := newCodexWorld(b, "never", "workspace-write")
			return w.dir, []string{w.path}, w.srv
		})
	})
	b.Run("opencode", func(b *testing.B) {
		benchDMToAgent(b, "oc", func(b *testing.B) (string, []string, *modelserver.Server) {
			w := newOpencodeWorld(b)
			return w.dir, w.env, w.srv
		})
	})
}

// benchDMToAgent measures one harness's seat (persona name) in a world
// made once (the benchmark function runs more than once, each run in a
// mesh of its own).
func benchDMToAgent(b *testing.B, name string, world func(b *testing.B) (dir string, env []string, srv *modelserver.Server)) {
	dir, env, srv := world(b)
	home := b.TempDir()
	const space = "bench"
	stamps := filepath.Join(b.TempDir(), "stamps")
	front := fmt.Sprintf("---\nname: fake\nagent: command\ncommand: %s\nready: mcp\ninject: true\nenv: {FAKEAGENT_STAMPS: %q}\n---\n", fakeAgentBin, stamps)
	if err := os.WriteFile(filepath.Join(dir, ".cotal", "agents", "fake.md"), []byte(front), 0o644); err != nil {
		b.Fatal(err)
	}
	benchUp(b, home, dir, space, env, name, "fake")
	// Each turn is over before the next step: the request carrying its
	// text came after its prompt's hook said working, so idle is its end.
	idle := func() { benchIdle(b, home, dir, space, name) }
	idle()
	bob := benchPeer(b, home, dir, space, "bob")
	seats := benchOperator(b, home, dir, space)
	rw, err := bob.WatchReceipts()
	if err != nil {
		b.Fatal(err)
	}
	defer rw.Close()
	// The DM's own notes time its way: the nudge typed, then its prompt's
	// hook (or plugin) handing it over.
	var woke, handed time.Time
	acked := func(id string) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		note := func(p mesh.Progress) {
			switch {
			case strings.Contains(p.Why, "woke its agent") && woke.IsZero():
				woke = p.At
			case strings.Contains(p.Why, "handed to its") && handed.IsZero():
				handed = p.At
			}
		}
		if p := rw.Wait(ctx, id, wire.RungAcked, 1, note); p[0].Reached != wire.RungAcked {
			b.Fatalf("DM %s never acked: %+v", id, p)
		}
	}
	carried := func(marker string) time.Time {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		req, err := srv.Wait(ctx, func(r *modelserver.Request) bool {
			return r.Kind == modelserver.Main && strings.Contains(r.New, marker)
		})
		if err != nil {
			b.Fatalf("the model never got %s: %v", marker, err)
		}
		return req.At
	}
	var dm, typed, fake, toNudge, toHook, toModel []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		marker := fmt.Sprintf("bench-dm-%d", i)
		srv.Chain(marker, modelserver.NewContains(marker), modelserver.Say("ok "+marker))
		b.StartTimer()
		start := time.Now()
		r, err := bob.DM(context.Background(), name, marker)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		at := carried(marker)
		dm = append(dm, at.Sub(start))
		woke, handed = time.Time{}, time.Time{}
		acked(r.ID) // a later hook proved the model had it
		if !woke.IsZero() && !handed.IsZero() {
			toNudge = append(toNudge, woke.Sub(start))
			toHook = append(toHook, handed.Sub(woke))
			toModel = append(toModel, at.Sub(handed))
		}
		idle()

		marker = fmt.Sprintf("bench-typed-%d", i)
		srv.Chain(marker, modelserver.NewContains(marker), modelserver.Say("ok "+marker))
		b.StartTimer()
		start = time.Now()
		if _, err := seats.Input(context.Background(), client.Seat{Name: name}, marker, true); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		typed = append(typed, carried(marker).Sub(start))
		idle()

		marker = fmt.Sprintf("bench-fake-%d", i)
		b.StartTimer()
		start = time.Now()
		r, err = bob.DM(context.Background(), "fake", marker)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		acked(r.ID)
		fake = append(fake, time.Duration(readStamp(b, stamps, marker)-start.UnixNano()))
		b.StartTimer()
	}
	b.StopTimer()
	p50d, p99d := percentiles(dm)
	p50t, p99t := percentiles(typed)
	p50f, p99f := percentiles(fake)
	b.ReportMetric(float64(p50d.Microseconds()), "dm-p50-µs")
	b.ReportMetric(float64(p99d.Microseconds()), "dm-p99-µs")
	b.ReportMetric(float64(p50t.Microseconds()), "typed-p50-µs")
	b.ReportMetric(float64(p99t.Microseconds()), "typed-p99-µs")
	b.ReportMetric(float64(p50f.Microseconds()), "fake-p50-µs")
	b.ReportMetric(float64(p99f.Microseconds()), "fake-p99-µs")
	// Where the DM's time went (p50s): publish to the nudge typed, the
	// nudge to the hook handing it over, the hook to the model request.
	for _, part := range []struct {
		name string
		l    []time.Duration
	}{{"nudge", toNudge}, {"hook", toHook}, {"model", toModel}} {
		p50, _ := percentiles(part.l)
		b.ReportMetric(float64(p50.Microseconds()), "dm-"+part.name+"-p50-µs")
	}
	b.ReportMetric(float64(p50d)/float64(p50t), "p50/typed")
	b.ReportMetric(float64(p99d)/float64(p99t), "p99/typed")
	b.ReportMetric(float64(p50d)/float64(p50f), "p50/fake")
	b.ReportMetric(float64(p99d)/float64(p99f), "p99/fake")
	b.ReportMetric(0, "ns/op") // the percentiles are the figure
}

// benchUp starts a mesh of its own in dir for the benchmark, with env,
// and spawns the personas in it.
func benchUp(b *testing.B, home, dir, space string, env []string, personas ...string) {
	b.Helper()
	if _, stderr, code := runInEnv(b, home, dir, space, env, "up", "--detach"); code != 0 {
		b.Fatalf("up: %s", stderr)
	}
	b.Cleanup(func() { runIn2(b, home, dir, space, "down", "--with-agents") })
	for _, p := range personas {
		out, stderr, code := runFor(b, spawnTimeout, home, dir, space, nil, "spawn", p)
		if code != 0 && !strings.Contains(out+stderr, "uncertain: not ready within") {
			b.Fatalf("spawn %s: exit %d\n%s\n%s", p, code, out, stderr)
		}
	}
}

// benchIdle waits for the seat to be idle at its prompt with nothing
// waiting. Past the readiness bound on a loaded machine (opencode starts
// slowly), a seat still comes up by its own start.
func benchIdle(b *testing.B, home, dir, space, name string) {
	b.Helper()
	waitFor(b, 240*time.Second, func() error {
		r := seatRowJSON(b, home, dir, space, name)
		if r.State != "ready" || r.Agent == nil || r.Agent.State != "idle" || r.Waiting != 0 {
			return fmt.Errorf("%s is not idle at its prompt: %+v / %+v", name, r, r.Agent)
		}
		return nil
	})
}

// percentiles are the p50 and p99 of l.
func percentiles(l []time.Duration) (p50, p99 time.Duration) {
	if len(l) == 0 {
		return 0, 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*0.50)], s[int(float64(len(s)-1)*0.99)]
}

// readStamp is the fake agent's stamp for the DM text, in unix ns.
func readStamp(b *testing.B, path, text string) int64 {
	b.Helper()
	var at int64
	waitFor(b, 30*time.Second, func() error {
		data, _ := os.ReadFile(path)
		for _, l := range strings.Split(string(data), "\n") {
			ns, rest, ok := strings.Cut(l, " ")
			if ok && rest == text {
				at, _ = strconv.ParseInt(ns, 10, 64)
				return nil
			}
		}
		return fmt.Errorf("the fake agent has not read %s", text)
	})
	return at
}

// benchOperator is the space's operator, connected in this process: it
// types into seats as `cotal input` does.
func benchOperator(b *testing.B, home, dir, space string) *client.Client {
	b.Helper()
	e, err := mesh.Connect(context.Background(), mesh.Options{URL: meshURL(b, home, dir, space),
		Creds: filepath.Join(home, "spaces", space, "auth", "operator.creds"), OneShot: true, Subscribe: []string{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	c, err := e.Control()
	if err != nil {
		b.Fatal(err)
	}
	return client.New(c)
}

// meshURL is the running mesh's URL.
func meshURL(b *testing.B, home, dir, space string) string {
	b.Helper()
	out, stderr, code := runIn2(b, home, dir, space, "status", "--json")
	if code != 0 {
		b.Fatalf("status: %s", stderr)
	}
	var st struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.URL == "" {
		b.Fatalf("status --json: %v\n%s", err, out)
	}
	return st.URL
}

// benchPeer is an identity of the running mesh, connected in this process
// (a publish timed here is the DM's start, without a CLI's start-up).
func benchPeer(b *testing.B, home, dir, space, name string) *mesh.Endpoint {
	b.Helper()
	m := mint(b, home, name, "--space", space)
	url := meshURL(b, home, dir, space)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := mesh.Connect(ctx, mesh.Options{URL: url, Creds: m.Creds, OneShot: true, Subscribe: []string{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	return e
}

// BenchmarkPromptToWaiting is a permission prompt until the seat reports
// it waiting on its person, per harness: from the model request whose
// answer asks for a shell command (the scripted server's clock) to the
// moment the seat's agent state turned waiting (its own stamp, which ps,
// the roster and NEEDS YOU show). Each prompt is then approved, as the
// person would (`cotal approve`), and the turn ends before the next. For
// opencode the same prompt is measured again after its plugin's `cotal
// hook --stream` is killed, when each event runs a hook of its own (the
// plugin's fallback, the way every event went before the stream): the
// ratio is the stream's over that.
//
//	go test -run XXX -bench PromptToWaiting -benchtime 10x ./e2e
func BenchmarkPromptToWaiting(b *testing.B) {
	if testing.Short() {
		b.Skip("runs the real harnesses; skipped under -short")
	}
	b.Run("claude", func(b *testing.B) {
		w := newClaudeWorld(b, map[string]any{"permissions": map[string]any{"ask": []string{"Bash"}}}, true)
		p := benchPrompts(b, "cc", w.dir, w.env, w.srv, func(file string) modelserver.Step {
			return modelserver.Use("Bash", fmt.Sprintf(`{"command":"touch %s","description":"make the marker file"}`, file))
		})
		p.report(b, p.measure(b, b.N), "")
	})
	b.Run("codex", func(b *testing.B) {
		w := newCodexWorld(b, "on-request", "workspace-write")
		p := benchPrompts(b, "cx", w.dir, []string{w.path}, w.srv, func(file string) modelserver.Step {
			return modelserver.Use("exec_command", fmt.Sprintf(`{"cmd":"touch %s","sandbox_permissions":"require_escalated","justification":"make the marker file"}`, file))
		})
		p.report(b, p.measure(b, b.N), "")
	})
	b.Run("opencode", func(b *testing.B) {
		w := newOpencodeWorld(b)
		p := benchPrompts(b, "oc", w.dir, w.env, w.srv, func(file string) modelserver.Step {
			return modelserver.Use("bash", fmt.Sprintf(`{"command":"touch %s","description":"make the marker file"}`, file))
		})
		streamed := p.measure(b, b.N)
		streams := hookStreams(b, p.home, p.dir, p.space, p.name)
		if len(streams) != 1 {
			b.Fatalf("%d hook streams under oc, want 1", len(streams))
		}
		if err := syscall.Kill(streams[0], syscall.SIGKILL); err != nil {
			b.Fatal(err)
		}
		waitFor(b, 10*time.Second, func() error {
			if processAlive(streams[0]) {
				return fmt.Errorf("the hook stream %d is still there", streams[0])
			}
			return nil
		})
		oneShot := p.measure(b, b.N)
		p.report(b, streamed, "")
		p.report(b, oneShot, "oneshot-")
		s50, s99 := percentiles(streamed)
		o50, o99 := percentiles(oneShot)
		b.ReportMetric(float64(s50)/float64(o50), "p50/oneshot")
		b.ReportMetric(float64(s99)/float64(o99), "p99/oneshot")
	})
}

// promptBench is one harness's seat in a mesh of its own, made to ask.
type promptBench struct {
	home, dir, space, name string
	srv                    *modelserver.Server
	peer                   *mesh.Endpoint
	ask                    func(file string) modelserver.Step
	n                      int
}

func benchPrompts(b *testing.B, name, dir string, env []string, srv *modelserver.Server, ask func(file string) modelserver.Step) *promptBench {
	p := &promptBench{home: b.TempDir(), dir: dir, space: "bench", name: name, srv: srv, ask: ask}
	benchUp(b, p.home, dir, p.space, env, name)
	benchIdle(b, p.home, dir, p.space, name)
	p.peer = benchPeer(b, p.home, dir, p.space, "bob")
	return p
}

// measure is n prompts, each from the request asking for the command to
// the seat's waiting, approved and its turn over after.
func (p *promptBench) measure(b *testing.B, n int) []time.Duration {
	var l []time.Duration
	for range n {
		p.n++
		marker := fmt.Sprintf("bench-ask-%d", p.n)
		file := fmt.Sprintf("run-%s-%d", p.name, p.n)
		p.srv.Chain(marker, modelserver.NewContains(marker), p.ask(file), modelserver.Say("done "+marker))
		if _, err := p.peer.DM(context.Background(), p.name, marker); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		asked, err := p.srv.Wait(ctx, func(r *modelserver.Request) bool { return r.Chain == marker })
		cancel()
		if err != nil {
			b.Fatalf("the model never got %s: %v", marker, err)
		}
		var since time.Time
		waitFor(b, 30*time.Second, func() error {
			r := seatRowJSON(b, p.home, p.dir, p.space, p.name)
			if r.Agent == nil || r.Agent.State != "waiting" || !strings.Contains(r.Agent.Asks, file) {
				return fmt.Errorf("%s is not waiting on %s: %+v / %+v", p.name, file, r, r.Agent)
			}
			since = time.UnixMilli(r.Agent.SinceMs)
			return nil
		})
		l = append(l, since.Sub(asked.At))
		if out, stderr, code := runIn2(b, p.home, p.dir, p.space, "approve", p.name); code != 0 {
			b.Fatalf("approve %s: exit %d\n%s\n%s", p.name, code, out, stderr)
		}
		waitFor(b, 30*time.Second, func() error {
			_, err := os.Stat(filepath.Join(p.dir, file))
			return err
		})
		benchIdle(b, p.home, p.dir, p.space, p.name)
	}
	return l
}

// report puts l's p50 and p99 on the benchmark, in ms.
func (p *promptBench) report(b *testing.B, l []time.Duration, prefix string) {
	p50, p99 := percentiles(l)
	b.ReportMetric(float64(p50.Microseconds())/1000, prefix+"waiting-p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, prefix+"waiting-p99-ms")
	b.ReportMetric(0, "ns/op")
}
