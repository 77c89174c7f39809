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
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/modelserver"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// BenchmarkDMToAgent is a peer's DM until its agent has it: for Claude
// Code, the model request that carries it (stamped by the scripted
// server's clock), after the seat's nudge and its prompt hook; next to
// the same DM reaching the fake command seat through its terminal (it
// stamps the moment it reads the injected line). Both seats run in one
// mesh and take turns, so they share the machine's load; each figure is
// its stamp minus the publish's start, as p50 and p99.
//
//	go test -run XXX -bench DMToAgent -benchtime 30x ./e2e
func BenchmarkDMToAgent(b *testing.B) {
	if testing.Short() {
		b.Skip("runs Claude Code; skipped under -short")
	}
	w := newClaudeWorld(b, map[string]any{}, true)
	home := b.TempDir()
	const space = "bench"
	stamps := filepath.Join(b.TempDir(), "stamps")
	dir := w.dir
	front := fmt.Sprintf("---\nname: fake\nagent: command\ncommand: %s\nready: mcp\ninject: true\nenv: {FAKEAGENT_STAMPS: %q}\n---\n", fakeAgentBin, stamps)
	if err := os.WriteFile(filepath.Join(dir, ".cotal", "agents", "fake.md"), []byte(front), 0o644); err != nil {
		b.Fatal(err)
	}
	if _, stderr, code := runInEnv(b, home, dir, space, w.env, "up", "--detach"); code != 0 {
		b.Fatalf("up: %s", stderr)
	}
	b.Cleanup(func() { runIn2(b, home, dir, space, "down", "--with-agents") })

	for _, p := range []string{"cc", "fake"} {
		if out, stderr, code := runIn2(b, home, dir, space, "spawn", p); code != 0 {
			b.Fatalf("spawn %s: exit %d\n%s\n%s", p, code, out, stderr)
		}
	}
	bob := benchPeer(b, home, dir, space, "bob")
	rw, err := bob.WatchReceipts()
	if err != nil {
		b.Fatal(err)
	}
	defer rw.Close()
	acked := func(id string) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if p := rw.Wait(ctx, id, wire.RungAcked, 1, nil); p[0].Reached != wire.RungAcked {
			b.Fatalf("DM %s never acked: %+v", id, p)
		}
	}
	var claude, fake []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		marker := fmt.Sprintf("bench-claude-%d", i)
		w.srv.Chain(marker, modelserver.NewContains(marker), modelserver.Say("ok "+marker))
		b.StartTimer()
		start := time.Now()
		r, err := bob.DM(context.Background(), "cc", marker)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		req, err := w.srv.Wait(ctx, func(r *modelserver.Request) bool {
			return r.Kind == modelserver.Main && strings.Contains(r.New, marker)
		})
		cancel()
		if err != nil {
			b.Fatalf("the model never got %s: %v", marker, err)
		}
		claude = append(claude, req.At.Sub(start))
		acked(r.ID) // its turn ended: the Stop hook proved the model had it

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
	p50c, p99c := percentiles(claude)
	p50f, p99f := percentiles(fake)
	b.ReportMetric(float64(p50c.Microseconds()), "claude-p50-µs")
	b.ReportMetric(float64(p99c.Microseconds()), "claude-p99-µs")
	b.ReportMetric(float64(p50f.Microseconds()), "fake-p50-µs")
	b.ReportMetric(float64(p99f.Microseconds()), "fake-p99-µs")
	b.ReportMetric(float64(p50c)/float64(p50f), "p50-ratio")
	b.ReportMetric(float64(p99c)/float64(p99f), "p99-ratio")
	b.ReportMetric(0, "ns/op") // the percentiles are the figure
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

// benchPeer is an identity of the running mesh, connected in this process
// (a publish timed here is the DM's start, without a CLI's start-up).
func benchPeer(b *testing.B, home, dir, space, name string) *mesh.Endpoint {
	b.Helper()
	m := mint(b, home, name, "--space", space)
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := mesh.Connect(ctx, mesh.Options{URL: st.URL, Creds: m.Creds, OneShot: true, Subscribe: []string{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	return e
}
