package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/seat/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main() // status probes the seat sandbox by launching this binary
	os.Exit(m.Run())
}

// cli runs cotal with args against a space kept in a temp store.
type cli struct {
	t     *testing.T
	paths config.Paths
}

func newCLI(t *testing.T, space string) cli {
	t.Setenv("COTAL_HOME", t.TempDir())
	for _, k := range []string{"COTAL_SPACE", "COTAL_CREDS", "COTAL_URL"} {
		t.Setenv(k, "")
	}
	return cli{t: t, paths: config.Paths{Space: space, StoreDir: t.TempDir()}}
}

func (c cli) run(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = run(append(args, "--space", c.paths.Space, "--store-dir", c.paths.StoreDir), &out, &errb)
	return out.String(), errb.String(), code
}

func (c cli) globals() *globals {
	return &globals{space: c.paths.Space, storeDir: c.paths.StoreDir, stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
}

func (c cli) host() *host.Host {
	c.t.Helper()
	h, err := host.Start(context.Background(), host.Config{Paths: c.paths, NoManager: true})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = h.Close() })
	return h
}

// crashed leaves broker.json as a crash does, its pid now naming a live
// process that is no mesh: this one.
func (c cli) crashed() {
	c.t.Helper()
	if err := config.WriteBrokerRecord(c.paths, config.BrokerRecord{Space: c.paths.Space, URL: "nats://127.0.0.1:1", PID: os.Getpid(), Mode: config.ModeAuth, Started: time.Now()}); err != nil {
		c.t.Fatal(err)
	}
}

func (c cli) corrupt() {
	c.t.Helper()
	if err := os.WriteFile(c.paths.BrokerFile(), []byte(`{"url": "nats://`), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

func TestACrashedMeshIsNotRunningWhateverItsPidNames(t *testing.T) {
	c := newCLI(t, "crashed")
	c.crashed()
	if _, err := c.globals().caller().Target(); !errors.Is(err, host.ErrNotRunning) {
		t.Errorf("resolveTarget: %v, want %v", err, host.ErrNotRunning)
	}
	if nc, err := host.ConnectIfRunning(c.paths, "test"); nc != nil || err != nil {
		t.Errorf("ConnectIfRunning: %v %v, want nothing running", nc, err)
	}
	out, _, code := c.run("status")
	if code != 1 || !strings.Contains(out, "down (pid") || !strings.Contains(out, "gone without stopping cleanly") {
		t.Errorf("status: exit %d\n%s", code, out)
	}
	if row := host.DescribeMesh(c.paths, ""); row.State != "crashed (pid gone)" {
		t.Errorf("meshes: %q", row.State)
	}
	out, _, code = c.run("down")
	if code != 0 || out != "mesh crashed is not running\n" {
		t.Errorf("down: exit %d %q", code, out)
	}
}

func TestACorruptBrokerJSONDoesNotHideARunningMesh(t *testing.T) {
	c := newCLI(t, "corrupt")
	c.host()
	c.corrupt()
	_, err := c.globals().caller().Target()
	var re *host.RecordError
	if !errors.As(err, &re) || errors.Is(err, host.ErrNotRunning) || !strings.Contains(err.Error(), c.paths.BrokerFile()+" is not valid") {
		t.Errorf("Target: %v; want the damage of broker.json named", err)
	}
	if _, err := host.ConnectIfRunning(c.paths, "test"); err == nil {
		t.Error("ConnectIfRunning: no error; minting must not be put off to the next start")
	}
	out, _, code := c.run("status", "--json")
	var st host.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if code != 1 || !st.Up || st.Reachable || st.PID != os.Getpid() || !strings.Contains(st.BrokerFileError, c.paths.BrokerFile()) {
		t.Errorf("status --json: exit %d %+v; want up (pid %d), unreachable, the damage named", code, st, os.Getpid())
	}
	out, _, _ = c.run("status")
	if !strings.Contains(out, "UNREACHABLE (pid") || !strings.Contains(out, "broker.json DAMAGED") {
		t.Errorf("status:\n%s", out)
	}
	if row := host.DescribeMesh(c.paths, ""); row.State != "running, broker.json damaged" || row.PID != os.Getpid() {
		t.Errorf("meshes: %+v", row)
	}
	out, _, code = c.run("up")
	if code != 0 || !strings.Contains(out, "already running (pid") || !strings.Contains(out, c.paths.BrokerFile()+" is not valid") {
		t.Errorf("up: exit %d %q", code, out)
	}
	_, errOut, code := c.run("down")
	if code != 1 || !strings.Contains(errOut, "cannot tell whether seats are live") || !strings.Contains(errOut, "broker.json") {
		t.Errorf("down: exit %d %q", code, errOut)
	}
}

func TestARunningMeshIsFoundByItsLock(t *testing.T) {
	c := newCLI(t, "found")
	h := c.host()
	tg, err := c.globals().caller().Target()
	if err != nil || tg.URL != h.Broker().URL() || tg.Creds != c.paths.OperatorCreds() {
		t.Fatalf("resolveTarget: %+v %v", tg, err)
	}
	out, _, code := c.run("up")
	if code != 0 || !strings.Contains(out, "already running (pid") || !strings.Contains(out, h.Broker().URL()) {
		t.Errorf("up: exit %d %q", code, out)
	}
}
