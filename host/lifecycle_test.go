package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
)

// envServe makes the test binary a background mesh as Detach starts one:
// its arguments are "serve <space> <store dir>" (a mesh until SIGTERM) or
// "fail" (it says why on stderr and exits 3).
const envServe = "COTAL_TEST_SERVE"

func serve(args []string) int {
	if len(args) != 3 || args[0] != "serve" {
		fmt.Fprintln(os.Stderr, "cannot start: the test asked this child to fail")
		return 3
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	h, err := host.Start(ctx, host.Config{Paths: config.Paths{Space: args[1], StoreDir: args[2]}, NoManager: true})
	var running *host.AlreadyRunningError
	if errors.As(err, &running) {
		fmt.Println(running)
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("serving")
	if err := h.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// holdLock starts a process of this binary that holds p's store lock
// until it is signalled.
func holdLock(t *testing.T, p config.Paths) *exec.Cmd {
	t.Helper()
	if err := config.EnsureDir(p.StoreDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHoldLock+"="+p.LockFile())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("lock holder did not start: %q %v", buf, err)
	}
	return cmd
}

// bystander is a live process that is no mesh: what a reused pid in a
// stale broker.json names.
func bystander(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

func writeRecord(t *testing.T, p config.Paths, pid int) {
	t.Helper()
	if err := config.WriteBrokerRecord(p, config.BrokerRecord{Space: p.Space, URL: "nats://127.0.0.1:1", PID: pid, Mode: config.ModeAuth, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

func corruptRecord(t *testing.T, p config.Paths) {
	t.Helper()
	if err := os.WriteFile(p.BrokerFile(), []byte(`{"space": "half a file`), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ours lists the goroutines of this module and of nats.go clients: what a
// host leaves behind if it leaks.
func ours() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "testing.tRunner") || strings.Contains(g, "host_test.ours") {
			continue
		}
		if strings.Contains(g, "github.com/cotal-go/cotal/") || strings.Contains(g, "github.com/nats-io/nats.go.") {
			out = append(out, g)
		}
	}
	return out
}

func TestStartAndCloseLeaveNothingRunning(t *testing.T) {
	p := config.Paths{Space: "tidy", StoreDir: filepath.Join(t.TempDir(), "store")}
	h, err := host.Start(context.Background(), host.Config{Paths: p, ProjectDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if h.Manager() == nil || h.Delivery() == nil {
		t.Fatal("an authenticated host with a manager runs no manager or no delivery service")
	}
	s, err := host.Probe(p)
	if err != nil || !s.Running || s.PID != os.Getpid() {
		t.Fatalf("probe of a running host: %+v %v", s, err)
	}
	if rec, err := s.Serving(); err != nil || rec.URL != h.Broker().URL() {
		t.Fatalf("serving: %+v %v", rec, err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		if left := ours(); len(left) > 0 {
			return fmt.Errorf("%d goroutines left after Close:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		return nil
	})
	s, err = host.Probe(p)
	if err != nil || s.Running || s.Record.Stopped.IsZero() {
		t.Fatalf("probe after Close: %+v %v; want not running, broker.json stopped", s, err)
	}
	if _, err := s.Serving(); !errors.Is(err, host.ErrNotRunning) {
		t.Fatalf("serving after Close: %v", err)
	}
}

func TestFailedStartLeavesNothingRunning(t *testing.T) {
	p := config.Paths{Space: "fails", StoreDir: filepath.Join(t.TempDir(), "store")}
	// cotal's data dir is a file: recording the space, the last step
	// before broker.json, fails once delivery and the manager run.
	data := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(data, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := host.Start(context.Background(), host.Config{Data: data, Paths: p, ProjectDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "recording space fails") {
		t.Fatalf("start with a data dir that is a file: %v", err)
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		if left := ours(); len(left) > 0 {
			return fmt.Errorf("%d goroutines left by the failed start:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		return nil
	})
	if _, held, err := broker.LockHolder(p.LockFile()); err != nil || held {
		t.Fatalf("the failed start left the lock held (%v)", err)
	}
	if _, err := os.Stat(p.BrokerFile()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the failed start wrote broker.json: %v", err)
	}
	start(t, p, false)
}

func TestACrashedMeshIsDownWhateverItsPidNames(t *testing.T) {
	p := config.Paths{Space: "crashed", StoreDir: t.TempDir()}
	// A crash left broker.json unstopped, and its pid now names another
	// live process.
	other := bystander(t)
	writeRecord(t, p, other.Process.Pid)
	s, err := host.Probe(p)
	if err != nil || s.Running {
		t.Fatalf("probe: %+v %v; want not running", s, err)
	}
	if _, err := s.Serving(); !errors.Is(err, host.ErrNotRunning) {
		t.Fatalf("serving: %v, want ErrNotRunning", err)
	}
	if pid, err := host.Stop(context.Background(), p, nil); !errors.Is(err, host.ErrNotRunning) || pid != 0 {
		t.Fatalf("stop: pid %d %v, want ErrNotRunning", pid, err)
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the process broker.json names was signalled: %v", err)
	}
}

func TestStopSignalsTheLockHolderNotThePidInBrokerJSON(t *testing.T) {
	p := config.Paths{Space: "stop", StoreDir: t.TempDir()}
	holder := holdLock(t, p)
	other := bystander(t)
	writeRecord(t, p, other.Process.Pid)

	s, err := host.Probe(p)
	if err != nil || !s.Running || s.PID != holder.Process.Pid {
		t.Fatalf("probe: %+v %v; want running, held by pid %d", s, err, holder.Process.Pid)
	}
	var re *host.RecordError
	if _, err := s.Serving(); !errors.As(err, &re) || !re.Starting || re.PID != holder.Process.Pid {
		t.Fatalf("serving with broker.json of another pid: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pid, err := host.Stop(ctx, p, nil)
	if err != nil || pid != holder.Process.Pid {
		t.Fatalf("stop: pid %d %v; want the holder %d", pid, err, holder.Process.Pid)
	}
	if _, held, _ := broker.LockHolder(p.LockFile()); held {
		t.Fatal("Stop returned with the lock still held")
	}
	if err := holder.Wait(); err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Fatalf("the holder ended with %v, want terminated by SIGTERM", err)
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the process broker.json names was signalled: %v", err)
	}
}

func TestStopGivesUpWhenCtxEnds(t *testing.T) {
	p := config.Paths{Space: "stubborn", StoreDir: t.TempDir()}
	t.Setenv(envIgnoreTerm, "1") // a holder that does not stop
	holder := holdLock(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	pid, err := host.Stop(ctx, p, nil)
	if !errors.Is(err, context.DeadlineExceeded) || pid != holder.Process.Pid {
		t.Fatalf("stop of a holder that ignores SIGTERM: pid %d %v; want %d and the deadline", pid, err, holder.Process.Pid)
	}
	if _, held, _ := broker.LockHolder(p.LockFile()); !held {
		t.Fatal("the lock is free, yet its holder ignores SIGTERM")
	}
}

func TestACorruptBrokerJSONDoesNotHideARunningMesh(t *testing.T) {
	p := config.Paths{Space: "corrupt", StoreDir: t.TempDir()}
	h := start(t, p, false)
	corruptRecord(t, p)

	s, err := host.Probe(p)
	if err != nil || !s.Running || s.PID != os.Getpid() {
		t.Fatalf("probe: %+v %v; want running in this process", s, err)
	}
	var re *host.RecordError
	if _, err := s.Serving(); !errors.As(err, &re) || re.Starting || !strings.Contains(err.Error(), p.BrokerFile()) {
		t.Fatalf("serving: %v; want the damage of %s named", err, p.BrokerFile())
	}
	_, err = host.Start(context.Background(), host.Config{Paths: p, NoManager: true})
	var running *host.AlreadyRunningError
	if !errors.As(err, &running) || running.PID != os.Getpid() || !strings.Contains(running.Error(), p.BrokerFile()+" is not valid") {
		t.Fatalf("second start: %v; want already running, naming the damage", err)
	}
	_, err = host.Detach(context.Background(), host.DetachConfig{Paths: p, Args: []string{"serve", p.Space, p.StoreDir}, Env: []string{envServe + "=1"}, Timeout: 10 * time.Second})
	if !errors.As(err, &running) || running.RecordErr == nil {
		t.Fatalf("detach: %v; want already running, naming the damage", err)
	}
	if h.Broker().URL() == "" {
		t.Fatal("no url")
	}
}

func TestDetachReportsReadyAlreadyRunningAndAnEarlyExit(t *testing.T) {
	p := config.Paths{Space: "detached", StoreDir: filepath.Join(t.TempDir(), "store")}
	cfg := host.DetachConfig{Paths: p, Args: []string{"fail"}, Env: []string{envServe + "=1"}, Timeout: 30 * time.Second}
	_, err := host.Detach(context.Background(), cfg)
	var exited *host.ExitedError
	if !errors.As(err, &exited) || !strings.Contains(exited.Log, "the test asked this child to fail") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("a child that fails: %v", err)
	}

	cfg.Args = []string{"serve", p.Space, p.StoreDir}
	rec, err := host.Detach(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = host.Stop(ctx, p, nil)
	})
	s, err := host.Probe(p)
	if err != nil || !s.Running || s.PID != rec.PID || rec.PID == os.Getpid() {
		t.Fatalf("after detach: %+v %v; want running in the child %d", s, err, rec.PID)
	}
	_, err = host.Detach(context.Background(), cfg)
	var running *host.AlreadyRunningError
	if !errors.As(err, &running) || running.PID != rec.PID || running.URL != rec.URL {
		t.Fatalf("a second detach: %v; want already running (pid %d, url %s)", err, rec.PID, rec.URL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if pid, err := host.Stop(ctx, p, nil); err != nil || pid != rec.PID {
		t.Fatalf("stop: %d %v", pid, err)
	}
	if s, _ := host.Probe(p); s.Running || s.Record.Stopped.IsZero() {
		t.Fatalf("after stop: %+v; want down, broker.json marked stopped", s)
	}
}

func TestSuperviseIsAManagerOnTheRunningMesh(t *testing.T) {
	p := config.Paths{Space: "sup", StoreDir: t.TempDir()}
	project := shellProject(t)
	m := start(t, p, false)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sup, err := host.Start(ctx, host.Config{Paths: p, ProjectDir: project, Readiness: 10 * time.Second,
		Supervise: &host.Supervise{URL: m.Broker().URL(), Creds: p.OperatorCreds(), InstanceFile: filepath.Join(t.TempDir(), "sup.id")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sup.Close() })
	if sup.Broker() != nil || sup.Delivery() != nil || sup.Manager() == nil {
		t.Fatal("a supervise host runs a broker or delivery, or no manager")
	}
	iid := sup.Manager().InstanceID()
	if iid == m.Manager().InstanceID() {
		t.Fatal("the supervise manager is the mesh's own")
	}
	if s, _ := host.Probe(p); s.PID != os.Getpid() || s.Record.URL != m.Broker().URL() {
		t.Fatalf("the supervise host touched the mesh's lock or broker.json: %+v", s)
	}
	js := mustJS(t, m)
	kv, err := js.KeyValue(ctx, wire.RecordsBucket(p.Space))
	if err != nil {
		t.Fatal(err)
	}
	registered := func(want int) error {
		regs, err := ep.ListRegistrations(ctx, kv, wire.ManagerEndpoint)
		if err != nil {
			return err
		}
		n := 0
		for _, r := range regs {
			if !r.Deregistered {
				n++
			}
		}
		if n != want {
			return fmt.Errorf("%d managers registered, want %d", n, want)
		}
		return nil
	}
	testutil.WaitFor(t, 5*time.Second, func() error { return registered(2) })

	if live, ok := sup.AskQuit(false); !ok || len(live) != 0 {
		t.Fatalf("quit with nothing live: %v %v", live, ok)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sup.Run(runCtx) }()
	stop()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	testutil.WaitFor(t, 10*time.Second, func() error { return registered(1) })
	if s, _ := host.Probe(p); !s.Running || s.PID != os.Getpid() {
		t.Fatalf("the mesh after the supervise host closed: %+v", s)
	}
}

// shellProject is a project whose one persona, shell, runs sh.
func shellProject(t *testing.T) string {
	t.Helper()
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, ".cotal", "agents"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".cotal", "agents", "shell.md"), []byte("---\nname: shell\nagent: command\ncommand: sh\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return project
}

func TestAQuitWithLiveSeatsIsAskedTwice(t *testing.T) {
	p := config.Paths{Space: "twice", StoreDir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := host.Start(ctx, host.Config{Paths: p, ProjectDir: shellProject(t), Readiness: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	if live, ok := h.AskQuit(false); !ok || len(live) != 0 {
		t.Fatalf("quit with nothing live: %v %v", live, ok)
	}
	// In process, as the dashboard's own manager is reached.
	nc, err := h.Broker().Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	opID, err := broker.ReadCredsIdentity(p.OperatorCreds())
	if err != nil {
		t.Fatal(err)
	}
	c, err := ep.NewClient(nc, ep.ClientOptions{Space: p.Space, Caller: proto.Caller{Owner: opID.Principal.Owner, Actor: opID.Principal.Actor, UID: opID.UID}, SharedConn: true})
	if err != nil {
		t.Fatal(err)
	}
	iid := h.Manager().InstanceID()
	r, err := c.Call(ctx, wire.ManagerEndpoint, "spawn", client.SpawnArgs{Persona: "shell"}, ep.On(iid))
	if err != nil {
		t.Fatal(err)
	}
	var acc client.SpawnAccepted
	if err := json.Unmarshal(r.Data, &acc); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 15*time.Second, func() error {
		res, err := c.Call(ctx, wire.ManagerEndpoint, "inspect", map[string]string{"name": acc.Name}, ep.On(iid))
		if err != nil {
			return err
		}
		var row client.Row
		_ = json.Unmarshal(res.Data, &row)
		if row.State != seat.StateReady {
			return fmt.Errorf("seat %s", row.State)
		}
		return nil
	})
	if live := h.Live(); len(live) != 1 || live[0] != acc.Name {
		t.Fatalf("live %v, want [%s]", live, acc.Name)
	}
	if live, ok := h.AskQuit(false); ok || len(live) != 1 || live[0] != acc.Name {
		t.Fatalf("first quit with a live seat: %v %v; want refused, naming %s", live, ok, acc.Name)
	}
	if _, ok := h.AskQuit(false); !ok {
		t.Fatal("a second quit within the window was refused")
	}
	if _, ok := h.AskQuit(true); !ok {
		t.Fatal("a forced quit was refused")
	}
}

// TestAHolderThatWroteItStoppedIsStopping: a process that still holds the
// lock but wrote "stopped" into its own broker.json is on its way out, not
// an earlier run's leftover; a new holder whose file is an older run's is
// starting.
func TestAHolderThatWroteItStoppedIsStopping(t *testing.T) {
	p := config.Paths{Space: "stopping", StoreDir: t.TempDir()}
	holder := holdLock(t, p)
	pid := holder.Process.Pid
	rec := config.BrokerRecord{Space: p.Space, URL: "nats://127.0.0.1:1", PID: pid, Mode: config.ModeAuth, Started: time.Now(), Stopped: time.Now()}
	if err := config.WriteBrokerRecord(p, rec); err != nil {
		t.Fatal(err)
	}
	s, err := host.Probe(p)
	if err != nil {
		t.Fatal(err)
	}
	var re *host.RecordError
	if _, err := s.Serving(); !errors.As(err, &re) || !re.Stopping || re.Starting || !strings.Contains(err.Error(), "stopping") {
		t.Fatalf("holder %d that wrote stopped: %v (%+v)", pid, err, re)
	}
	rec.PID = pid + 100000 // an earlier run's file
	if err := config.WriteBrokerRecord(p, rec); err != nil {
		t.Fatal(err)
	}
	if s, err = host.Probe(p); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Serving(); !errors.As(err, &re) || re.Stopping || !re.Starting {
		t.Fatalf("holder %d with an earlier run's file: %v (%+v)", pid, err, re)
	}
}
