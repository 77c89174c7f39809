package host_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/sandbox"
)

// envHoldLock makes the test binary a process that takes a space's lock
// and waits to be killed: a real holder that can die with the lock held.
const envHoldLock = "COTAL_TEST_HOLD_LOCK"

// envIgnoreTerm makes that lock holder ignore SIGTERM.
const envIgnoreTerm = "COTAL_TEST_IGNORE_TERM"

func TestMain(m *testing.M) {
	sandbox.Main() // seats start through this binary: it is the manager's launcher
	if os.Getenv(envServe) != "" {
		os.Exit(serve(os.Args[1:]))
	}
	if dir := os.Getenv(envMintSeat); dir != "" {
		os.Exit(mintSeatAndExit(dir))
	}
	if path := os.Getenv(envHoldLock); path != "" {
		if os.Getenv(envIgnoreTerm) != "" {
			signal.Ignore(syscall.SIGTERM)
		}
		if _, err := broker.AcquireLock(path); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		select {}
	}
	os.Exit(m.Run())
}

func start(t *testing.T, p config.Paths, open bool) *host.Host {
	t.Helper()
	m, err := host.Start(context.Background(), host.Config{Data: filepath.Join(p.StoreDir, "..", "data"), Paths: p, Open: open})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func TestRestartKeepsStreamsBucketsAndKeys(t *testing.T) {
	p := config.Paths{Space: "keep", StoreDir: filepath.Join(t.TempDir(), "store")}
	m := start(t, p, false)
	nc, err := m.Broker().Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	testmesh.StoreData(t, nc, wire.Root("keep")+".chat.local.alice.general", []byte(`{"id":"1"}`))
	reg, err := js.KeyValue(ctx, wire.ChannelsBucket("keep"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Put(ctx, "general", []byte(`{"description":"kept"}`)); err != nil {
		t.Fatal(err)
	}
	// An operator's retention edit must survive a restart.
	chat, _ := js.Stream(ctx, wire.ChatStream("keep"))
	cfg := chat.CachedInfo().Config
	cfg.MaxMsgsPerSubject = 50
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	m2 := start(t, p, false)
	nc2, err := m2.Broker().Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc2.Close()
	js2, _ := jetstream.New(nc2)
	for _, s := range broker.StreamConfigs("keep", 0) {
		if _, err := js2.Stream(ctx, s.Name); err != nil {
			t.Errorf("stream %s after restart: %v", s.Name, err)
		}
	}
	for _, b := range broker.BucketConfigs("keep", 0) {
		if _, err := js2.KeyValue(ctx, b.Bucket); err != nil {
			t.Errorf("bucket %s after restart: %v", b.Bucket, err)
		}
	}
	info, err := js2.Stream(ctx, wire.ChatStream("keep"))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.CachedInfo().State.Msgs; n != 1 {
		t.Errorf("CHAT holds %d messages after restart, want 1", n)
	}
	if n := info.CachedInfo().Config.MaxMsgsPerSubject; n != 50 {
		t.Errorf("CHAT per-subject limit %d after restart, want the edited 50", n)
	}
	reg2, _ := js2.KeyValue(ctx, wire.ChannelsBucket("keep"))
	e, err := reg2.Get(ctx, "general")
	if err != nil || !strings.Contains(string(e.Value()), "kept") {
		t.Fatalf("registry key after restart: %v", err)
	}
	if _, err := reg2.Get(ctx, broker.DefaultsKey); err != nil {
		t.Fatalf("channel defaults: %v", err)
	}
}

func TestSecondStartIsRefusedPolitely(t *testing.T) {
	p := config.Paths{Space: "twice", StoreDir: t.TempDir()}
	m := start(t, p, false)
	_, err := host.Start(context.Background(), host.Config{Paths: p})
	var running *host.AlreadyRunningError
	if !errors.As(err, &running) {
		t.Fatalf("second start: want AlreadyRunningError, got %v", err)
	}
	want := "mesh twice already running (pid " + strconv.Itoa(os.Getpid()) + ", url " + m.Broker().URL() + ")"
	if running.Error() != want {
		t.Fatalf("got %q, want %q", running.Error(), want)
	}
}

func TestLockOfDeadProcessIsRecovered(t *testing.T) {
	p := config.Paths{Space: "dead", StoreDir: t.TempDir()}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHoldLock+"="+p.LockFile())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("lock holder did not start: %q %v", buf, err)
	}
	if _, err := host.Start(context.Background(), host.Config{Paths: p}); err == nil {
		t.Fatal("start succeeded while another process held the lock")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	m := start(t, p, false)
	if m.Broker().URL() == "" {
		t.Fatal("no url")
	}
}

func TestUnwritableStoreDirIsNamed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(file, "store")
	_, err := host.Start(context.Background(), host.Config{Paths: config.Paths{Space: "x", StoreDir: dir}})
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("want an error naming %s, got %v", dir, err)
	}
}

func TestOpenModeAcceptsAnonymousClients(t *testing.T) {
	p := config.Paths{Space: "opn", StoreDir: t.TempDir()}
	m := start(t, p, true)
	nc, err := nats.Connect(m.Broker().URL())
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	rec, err := config.ReadBrokerRecord(p)
	if err != nil || rec.Mode != config.ModeOpen {
		t.Fatalf("broker.json mode: %+v %v", rec, err)
	}
}

func TestMintBeforeUpIsProvisionedByUp(t *testing.T) {
	p := config.Paths{Space: "early", StoreDir: t.TempDir()}
	id := broker.Identity{Space: "early", Principal: wire.Principal{Owner: "local", Actor: "bob"}, Role: "reviewer"}
	c, provisioned, err := issue.Mint(context.Background(), p, id, nil)
	if err != nil || provisioned {
		t.Fatalf("mint while down: provisioned=%v err=%v", provisioned, err)
	}
	m := start(t, p, false)
	nc, _ := m.Broker().Connect("test")
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	testutil.WaitFor(t, 5*time.Second, func() error {
		_, err := js.Consumer(ctx, wire.DMStream("early"), wire.DMConsumer(c.Identity.Principal, c.Identity.UID))
		return err
	})
	if _, err := js.Consumer(ctx, wire.TaskStream("early"), wire.SvcConsumer("reviewer")); err != nil {
		t.Fatalf("role queue: %v", err)
	}
}
