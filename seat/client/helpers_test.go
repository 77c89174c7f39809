package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/sandbox"
)

// The tests import host (and through it seat and broker) only to stand up a
// real mesh with managers; the client package itself never does.

func TestMain(m *testing.M) {
	sandbox.Main() // seats start through this binary: it is the managers' launcher
	os.Exit(m.Run())
}

const space = "clients"

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// harness is one real mesh (broker, delivery, manager) on a temp store,
// personas in a temp project, and a manager client as the space's operator.
type harness struct {
	t       testing.TB
	m       *host.Host
	paths   config.Paths
	project string
	op      *nats.Conn
	c       *client.Client
	iid     string // the mesh-hosted manager; "" with NoManager
}

func startMesh(t testing.TB, cfg host.Config) *harness {
	t.Helper()
	cfg.Paths = config.Paths{Space: space, StoreDir: t.TempDir()}
	if cfg.Readiness == 0 {
		cfg.Readiness = 5 * time.Second
	}
	h := &harness{t: t, paths: cfg.Paths, project: t.TempDir()}
	cfg.ProjectDir = h.project
	m, err := host.Start(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	t.Cleanup(func() { _ = m.Close() })
	h.op = h.conn("operator")
	op, err := broker.ReadCredsIdentity(cfg.Paths.OperatorCreds())
	if err != nil {
		t.Fatal(err)
	}
	h.c = h.client(h.op, proto.Caller{Owner: op.Principal.Owner, Actor: op.Principal.Actor, UID: op.UID})
	if m.Manager() != nil {
		h.iid = m.Manager().InstanceID()
		// Registered after the mesh's Close, so it runs first: an
		// interactive sh ignores SIGTERM, and a graceful stop waits 3 s.
		t.Cleanup(func() { h.killSeats(h.iid) })
	}
	return h
}

func (h *harness) conn(name string) *nats.Conn {
	h.t.Helper()
	nc, err := h.m.Broker().Connect(name)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(nc.Close)
	return nc
}

func (h *harness) client(nc *nats.Conn, caller proto.Caller) *client.Client {
	h.t.Helper()
	c, err := ep.NewClient(nc, ep.ClientOptions{Space: space, Caller: caller})
	if err != nil {
		h.t.Fatal(err)
	}
	return client.New(c)
}

// connectAs connects over TCP with a creds file, as a process outside the
// mesh does, and returns a manager client as its identity.
func (h *harness) connectAs(creds string) *client.Client {
	h.t.Helper()
	id, err := broker.ReadCredsIdentity(creds)
	if err != nil {
		h.t.Fatal(err)
	}
	nc, err := nats.Connect(h.m.Broker().URL(), nats.UserCredentials(creds), nats.CustomInboxPrefix(id.InboxPrefix()),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})) // refusals are asserted, not logged
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(nc.Close)
	return h.client(nc, proto.Caller{Owner: id.Principal.Owner, Actor: id.Principal.Actor, UID: id.UID})
}

// agent mints an agent identity with caps and connects as it.
func (h *harness) agent(name string, caps ...string) *client.Client {
	h.t.Helper()
	cr, _, err := issue.Mint(ctxT(h.t), h.paths, broker.Identity{
		Space: space, Principal: wire.Principal{Owner: "local", Actor: name}, AllowPublish: []string{}, Capabilities: caps,
	}, h.op)
	if err != nil {
		h.t.Fatal(err)
	}
	path := filepath.Join(h.t.TempDir(), name+".creds")
	if err := broker.WriteCreds(path, cr); err != nil {
		h.t.Fatal(err)
	}
	return h.connectAs(path)
}

// asSeat connects with a spawned seat's own creds, as a `cotal` command run
// inside the seat does.
func (h *harness) asSeat(sp client.Spawned) *client.Client {
	h.t.Helper()
	return h.connectAs(filepath.Join(seat.LaunchDir(issue.RunDir(h.paths), sp.Name, sp.UID), "seat.creds"))
}

// persona writes .cotal/agents/<name>.md running command with args.
func (h *harness) persona(name, command string, args ...string) {
	h.t.Helper()
	q := func(v any) string { s, _ := json.Marshal(v); return string(s) } // JSON is YAML flow
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\nagent: command\ncommand: %s\n", name, q(command))
	if args != nil {
		fmt.Fprintf(&b, "args: %s\n", q(args))
	}
	h.agentFile(name, b.String()+"---\n")
}

// agentFile writes .cotal/agents/<name>.md as text says.
func (h *harness) agentFile(name, text string) {
	h.t.Helper()
	dir := config.AgentsDir(h.project)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(text), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// extraManager starts another manager instance of the mesh in this
// process, as `cotal supervise` does, on its own connection; closing that
// connection is how a test crashes it.
func (h *harness) extraManager(name string) (*seat.Manager, *nats.Conn) {
	h.t.Helper()
	return h.managerAt(filepath.Join(h.t.TempDir(), name+".id"))
}

// managerAt starts a manager whose instance id is kept in file: a second
// one on the same file is the same instance restarted, at a new epoch.
func (h *harness) managerAt(file string) (*seat.Manager, *nats.Conn) {
	h.t.Helper()
	name := strings.TrimSuffix(filepath.Base(file), ".id")
	nc, err := h.m.Broker().Connect("manager-" + name)
	if err != nil {
		h.t.Fatal(err)
	}
	mgr, err := seat.New(seat.Options{
		Space: space, URL: h.m.Broker().URL(), Conn: nc,
		Identity:     ep.Identity{Principal: wire.Principal{Owner: "local", Actor: "cotal_manager"}, UID: wire.NewLifecycleUID()},
		InstanceFile: file, ProjectDir: h.project,
		Minter: issue.NewSeatMinter(h.paths, nc, false), Readiness: 5 * time.Second,
	})
	if err != nil {
		nc.Close()
		h.t.Fatal(err)
	}
	if err := mgr.Start(ctxT(h.t)); err != nil {
		nc.Close()
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		_ = mgr.Close()
		nc.Close()
	})
	h.t.Cleanup(func() { h.killSeats(mgr.InstanceID()) })
	return mgr, nc
}

// killSeats SIGKILLs every running seat of the manager on iid.
func (h *harness) killSeats(iid string) {
	cs, err := h.c.Census(ctxT(h.t), iid)
	if err != nil {
		return
	}
	for _, r := range cs.Running() {
		_, _ = h.c.Stop(ctxT(h.t), r.Seat(), false)
	}
}

// up spawns persona (pinned to a name when name is set) on the manager
// on, and waits until the seat is up.
func (h *harness) up(c *client.Client, persona, name, on string) client.Spawned {
	h.t.Helper()
	sp, err := c.Spawn(ctxT(h.t), client.SpawnArgs{Persona: persona, Name: name}, on)
	if err != nil {
		h.t.Fatalf("spawn of %s: %v", persona, err)
	}
	res, err := c.AwaitSpawn(ctxT(h.t), sp, client.Watch{})
	if err != nil || res.State != ep.GoalSucceeded {
		h.t.Fatalf("spawn of %s: %s %+v (%v)", persona, res.State, res.Error, err)
	}
	return sp
}

func waitFor(t testing.TB, total time.Duration, fn func() error) {
	t.Helper()
	testutil.WaitFor(t, total, fn)
}

// errCode is err's ep error, or fails.
func errCode(t testing.TB, err error) *proto.Error {
	t.Helper()
	e := proto.AsError(err)
	if e == nil {
		t.Fatalf("want an *proto.Error, got %v", err)
	}
	return e
}
