package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/internal/testcluster"
)

// benchRows are the paths `cotal bench` measures, in its table's order.
var benchRows = []string{
	"dm publish to hand-over", "anycast publish to hand-over",
	"live fan-out 1", "live fan-out 10", "live fan-out 100",
	"durable fan-out 10", "durable fan-out 100",
	"control call round trip", "scatter to 16",
	"pty start to first output", "spawn to ready (command seat)", "seat input to screen",
	"dm to the seat's pty", "publish to injected", "up to ready (empty store)",
}

// runBench runs `cotal bench args...` on the built binary with its
// temporary files in tmp, for at most limit, and fails the test unless it
// succeeds.
func runBench(t *testing.T, home, tmp string, limit time.Duration, args ...string) (out, errb bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, cotalBin, append([]string{"bench"}, args...)...)
	cmd.Env = append(cotalEnv(home), "TMPDIR="+tmp)
	cmd.Dir = fakeHome
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("cotal bench %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out, errb
}

// TestBenchQuickJSON runs `cotal bench --quick --json` on the built
// binary: one row per path in order, each with figures on both sides, a
// ratio and a goal; a progress line on stderr; nothing left in the
// temporary directory or the caller's COTAL_HOME.
func TestBenchQuickJSON(t *testing.T) {
	home, tmp := t.TempDir(), t.TempDir()
	// The quick run measures ten seconds, but setting up its hundred
	// members takes longer on a loaded machine.
	out, errb := runBench(t, home, tmp, 5*time.Minute, "--quick", "--json")
	var rows []struct {
		Path  string
		Unit  string
		Cotal struct {
			N        int
			P50, P99 float64
		}
		Floor struct {
			N        int
			P50, P99 float64
		}
		FloorPath string `json:"floor_path"`
		Ratio     float64
		Goal      string
		Met       *bool
		Error     string
	}
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, out.String())
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Path)
		if r.Error != "" {
			t.Errorf("%s: %s", r.Path, r.Error)
			continue
		}
		for side, s := range map[string]struct {
			N        int
			P50, P99 float64
		}{"cotal": r.Cotal, "floor": r.Floor} {
			if s.N < 3 || s.P50 <= 0 || s.P99 < s.P50 {
				t.Errorf("%s: %s figures %+v: want at least 3 samples and 0 < p50 <= p99", r.Path, side, s)
			}
		}
		if r.Ratio <= 0 || r.Goal == "" || r.FloorPath == "" || r.Unit == "" || r.Met == nil {
			t.Errorf("%s: row %+v lacks a ratio, goal, floor, unit or met", r.Path, r)
		}
	}
	if !slices.Equal(names, benchRows) {
		t.Errorf("bench rows:\n%q\nwant\n%q", names, benchRows)
	}
	if !strings.Contains(errb.String(), "bench: 1/15 dm publish to hand-over") {
		t.Errorf("no progress line on stderr: %q", errb.String())
	}
	for dir, what := range map[string]string{tmp: "the temporary directory", home: "COTAL_HOME"} {
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("bench left %d entries in %s (%s): %v", len(left), what, dir, left[0].Name())
		}
	}
}

// TestBenchRefusesBadInput: a measure too short to mean anything, two
// ways of saying how long, and an unknown path are bad input (exit 2)
// that names the fix.
func TestBenchRefusesBadInput(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--time", "10ms"}, "at least 1s"},
		{[]string{"bench", "--quick", "--time", "5s"}, "give one"},
		{[]string{"bench", "--path", "warp drive"}, "the paths are"},
		{[]string{"bench", "--url", "http://example"}, "use nats:// or tls://"},
		{[]string{"bench", "--url", "nats://u:secret@127.0.0.1:4222"}, "pass a creds file"},
		{[]string{"bench", "--url", "nats://127.0.0.1:4222", "--path", "up to ready (empty store)"}, "starts a mesh of its own"},
		{[]string{"bench", "--url", "nats://127.0.0.1:4222", "--path", "durable fan-out 10"}, "minted identities"},
	} {
		_, stderr, code := runCotal(t, home, c.args...)
		if strings.Contains(stderr, "secret") {
			t.Errorf("cotal %s printed the URL's password: %q", strings.Join(c.args, " "), stderr)
		}
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("cotal %s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
}

// TestBenchOnARunningCluster runs `cotal bench --url` on a 3-node cluster
// without auth: the rows that run there each have figures on both sides,
// and the run leaves no stream or bucket of its space on the cluster. On
// a cluster that asks for auth it says it needs one that does not.
func TestBenchOnARunningCluster(t *testing.T) {
	c := testcluster.Start(t, 3, "")
	home, tmp := t.TempDir(), t.TempDir()
	rows := []string{"dm publish to hand-over", "control call round trip", "dm to the seat's pty"}
	out, _ := runBench(t, home, tmp, 4*time.Minute, "--url", c.URL(), "--time", "6s", "--json", "--path", strings.Join(rows, ","))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []struct {
		Path         string
		Cotal, Floor struct{ N int }
		Ratio        float64
		Error        string
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("bench --url --json: %v\n%s", err, out.String())
	}
	var names []string
	for _, r := range got {
		names = append(names, r.Path)
		if r.Error != "" || r.Cotal.N < 3 || r.Floor.N < 3 || r.Ratio <= 0 {
			t.Errorf("%s on the cluster: %+v", r.Path, r)
		}
	}
	if !slices.Equal(names, rows) {
		t.Errorf("rows %q, want %q", names, rows)
	}
	nc, err := nats.Connect(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	for name := range js.StreamNames(ctx).Name() {
		if strings.Contains(name, "bench") || strings.Contains(name, "RAW") {
			t.Errorf("the bench left stream %s on the cluster", name)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("bench left %d entries in its temporary directory: %v", len(left), left[0].Name())
	}

	// A cluster that asks for auth.
	conf := filepath.Join(t.TempDir(), "auth.conf")
	if err := os.WriteFile(conf, []byte("authorization { user: a, password: b }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	locked := testcluster.Start(t, 1, conf)
	_, stderr, code := runCotal(t, home, "bench", "--url", locked.URL(), "--quick")
	if code == 0 || !strings.Contains(stderr, "without auth") {
		t.Errorf("bench --url on a server that asks for auth: exit %d, stderr %q; want a failure saying it needs one without auth", code, stderr)
	}
}
