package seat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/sandbox"
)

// cotalBin is the cotal binary TestMain builds, for seats that run it.
var cotalBin string

func TestMain(m *testing.M) {
	sandbox.Main() // seats start through this binary: it is the manager's launcher
	if os.Getenv(fakeClaudeEnv) != "" {
		fakeClaude() // a claude seat's stand-in
		return
	}
	if os.Getenv(busyQuitterEnv) == "1" {
		busyQuitter() // a seat that draws, computes a while and exits
		return
	}
	if os.Getenv(benchReaderEnv) == "1" {
		benchReader() // a seat of the injection benchmark
		return
	}
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "cotal-seat-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "seat tests:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	cotalBin = filepath.Join(tmp, "cotal")
	if err := buildCotal(cotalBin, tmp); err != nil {
		fmt.Fprintln(os.Stderr, "seat tests:", err)
		return 1
	}
	code := m.Run()
	// Every seat is a child of this process; the managers' Close must have
	// reaped them all. A survivor is a leak, and it fails the run.
	if kids := children(os.Getpid()); len(kids) > 0 {
		fmt.Fprintf(os.Stderr, "seat tests: processes still running after the tests: %v (killing them)\n", kids)
		for _, pid := range kids {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
		if code == 0 {
			code = 1
		}
	}
	return code
}

// buildCotal builds the module's main package (the parent directory) into
// out. Other packages of the working tree may be mid-edit by someone else;
// when it does not build, the committed tree (git HEAD, exported under tmp)
// is built instead, and that is said on stderr.
func buildCotal(out, tmp string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := func(dir string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, ".")
		cmd.Dir = dir
		return cmd.CombinedOutput()
	}
	first, err := build("..")
	if err == nil {
		trackSources("..")
		return nil
	}
	head := filepath.Join(tmp, "head")
	if err := os.Mkdir(head, 0o700); err != nil {
		return err
	}
	export := exec.CommandContext(ctx, "sh", "-c", `git -C .. archive HEAD | tar -x -C "$1"`, "sh", head)
	if b, err := export.CombinedOutput(); err != nil {
		return fmt.Errorf("go build of the cotal binary: %s\nexporting git HEAD: %v\n%s", first, err, b)
	}
	if b, err := build(head); err != nil {
		return fmt.Errorf("go build of the cotal binary: %s\nand of git HEAD: %v\n%s", first, err, b)
	}
	fmt.Fprintf(os.Stderr, "seat tests: the working tree does not build; the cotal binary seats run is git HEAD's:\n%s", first)
	return nil
}

// trackSources opens every Go source of the module from this process: the
// build above read them in a child, which go test's result cache does not
// see, so a change to the CLI would otherwise replay a stale pass.
func trackSources(root string) {
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata"):
			return filepath.SkipDir
		case strings.HasSuffix(d.Name(), ".go") || d.Name() == "go.mod" || d.Name() == "go.sum":
			if f, err := os.Open(path); err == nil {
				f.Close()
			}
		}
		return nil
	})
}

// children lists the live (non-zombie) processes whose parent is pid.
func children(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, de := range ents {
		n, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", de.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut at the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			out = append(out, n)
		}
	}
	return out
}

// waitFor polls fn until it returns nil or total passes; it never sleeps
// longer than one short tick between tries.
func waitFor(t testing.TB, total time.Duration, fn func() error) {
	t.Helper()
	testutil.WaitFor(t, total, fn)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// harness is one real mesh (broker, delivery, manager) on a temp store,
// with personas in a temp project and an operator ep client.
type harness struct {
	t       testing.TB
	m       *host.Host
	paths   config.Paths
	project string
	op      *nats.Conn
	caller  proto.Caller
	c       *ep.Client
	iid     string // the mesh-hosted manager
}

const space = "seats"

// startMesh starts a mesh whose manager gives up on readiness after readiness.
func startMesh(t testing.TB, readiness time.Duration) *harness {
	t.Helper()
	return startMeshWith(t, host.Config{Paths: config.Paths{Space: space, StoreDir: t.TempDir()}, Readiness: readiness})
}

// startMeshWith starts a mesh as cfg says, with personas in a temp project.
func startMeshWith(t testing.TB, cfg host.Config) *harness {
	t.Helper()
	h := &harness{t: t, paths: cfg.Paths, project: t.TempDir()}
	cfg.ProjectDir = h.project
	m, err := host.Start(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	t.Cleanup(func() { _ = m.Close() })
	h.op = h.conn("operator")
	// The manager admits only callers the space minted: act as the mesh's
	// own operator (an open mesh has none and checks nobody).
	h.caller = proto.Caller{Owner: "local", Actor: "tester", UID: wire.NewLifecycleUID()}
	if op, err := broker.ReadCredsIdentity(cfg.Paths.OperatorCreds()); err == nil {
		h.caller = proto.Caller{Owner: op.Principal.Owner, Actor: op.Principal.Actor, UID: op.UID}
	}
	h.c = h.client(h.op, h.caller)
	h.iid = m.Manager().InstanceID()
	// Registered after the mesh's Close, so it runs first: an interactive sh
	// ignores SIGTERM, and a graceful stop of it would wait out 3 s.
	t.Cleanup(func() { h.killSeats(h.iid) })
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

func (h *harness) client(nc *nats.Conn, caller proto.Caller) *ep.Client {
	h.t.Helper()
	c, err := ep.NewClient(nc, ep.ClientOptions{Space: space, Caller: caller})
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// persona writes .cotal/agents/<name>.md running command with args.
func (h *harness) persona(name, command string, args []string, env map[string]string) {
	h.t.Helper()
	var b strings.Builder
	q := func(v any) string { s, _ := json.Marshal(v); return string(s) } // JSON is YAML flow
	fmt.Fprintf(&b, "---\nname: %s\nagent: command\ncommand: %s\n", name, q(command))
	if args != nil {
		fmt.Fprintf(&b, "args: %s\n", q(args))
	}
	if env != nil {
		fmt.Fprintf(&b, "env: %s\n", q(env))
	}
	b.WriteString("---\n")
	h.personaText(name, b.String())
}

// personaText writes the agent file of persona name as text.
func (h *harness) personaText(name, text string) {
	h.t.Helper()
	dir := config.AgentsDir(h.project)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(text), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// managers are the manager clients of the tests' ep clients, one each, so
// each follows its spawns' progress on one subscription.
var managers sync.Map // *ep.Client -> *client.Client

// mgr is the manager client calling as c.
func mgr(c *ep.Client) *client.Client {
	if v, ok := managers.Load(c); ok {
		return v.(*client.Client)
	}
	v, _ := managers.LoadOrStore(c, client.New(c))
	return v.(*client.Client)
}

// spawn asks the manager on iid for a seat and returns the acceptance.
func spawn(t testing.TB, c *ep.Client, iid string, a client.SpawnArgs) (client.SpawnAccepted, error) {
	t.Helper()
	sp, err := mgr(c).Spawn(ctxT(t), a, iid)
	if err != nil {
		return client.SpawnAccepted{}, err
	}
	if sp.Manager != iid {
		t.Fatalf("spawn pinned to %s was answered by %s", iid, sp.Manager)
	}
	return sp.SpawnAccepted, nil
}

func mustSpawn(t testing.TB, c *ep.Client, iid string, a client.SpawnArgs) client.SpawnAccepted {
	t.Helper()
	acc, err := spawn(t, c, iid, a)
	if err != nil {
		t.Fatalf("spawn %+v: %v", a, err)
	}
	return acc
}

// goal follows a spawn's goal, as the caller that spawned, until it ends.
func goal(t testing.TB, c *ep.Client, iid, goalID string, total time.Duration) ep.GoalResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), total)
	defer cancel()
	sp := client.Spawned{SpawnAccepted: client.SpawnAccepted{Name: goalID, GoalID: goalID}, Manager: iid}
	res, err := mgr(c).AwaitSpawn(ctx, sp, client.Watch{})
	if err != nil {
		t.Fatalf("goal %s: %v", goalID, err)
	}
	return res
}

// call runs a manager command pinned to iid and decodes its reply into out.
func call(t testing.TB, c *ep.Client, iid, command string, args, out any) error {
	t.Helper()
	r, err := c.Call(ctxT(t), wire.ManagerEndpoint, command, args, ep.On(iid), ep.Timeout(10*time.Second))
	if err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			t.Fatalf("%s reply %s: %v", command, r.Data, err)
		}
	}
	return nil
}

func mustCall(t testing.TB, c *ep.Client, iid, command string, args, out any) {
	t.Helper()
	if err := call(t, c, iid, command, args, out); err != nil {
		t.Fatalf("%s %v: %v", command, args, err)
	}
}

// ps is the census of the manager on iid.
func ps(t testing.TB, c *ep.Client, iid string) *client.Census {
	t.Helper()
	cs, err := mgr(c).Census(ctxT(t), iid)
	if err != nil {
		t.Fatalf("ps on %s: %v", iid, err)
	}
	return cs
}

func row(cs *client.Census, name string) (client.Row, bool) {
	for _, x := range cs.Rows {
		if x.Name == name {
			return x.Row, true
		}
	}
	return client.Row{}, false
}

// seatNames are the names of a census's seats, sorted.
func seatNames(cs *client.Census) []string {
	out := make([]string, 0, len(cs.Rows))
	for _, x := range cs.Rows {
		out = append(out, x.Name)
	}
	sort.Strings(out)
	return out
}

// names are the names of one manager's ps reply, sorted.
func names(r client.PsReply) []string {
	out := make([]string, 0, len(r.Seats))
	for _, x := range r.Seats {
		out = append(out, x.Name)
	}
	sort.Strings(out)
	return out
}

func screen(t testing.TB, c *ep.Client, iid, name string) client.ScreenReply {
	t.Helper()
	r, err := mgr(c).Screen(ctxT(t), client.Seat{Name: name, Manager: iid})
	if err != nil {
		t.Fatalf("screen of %s: %v", name, err)
	}
	return r
}

// waitScreen polls the screen command until the seat's screen holds want.
func waitScreen(t testing.TB, c *ep.Client, iid, name, want string, total time.Duration) string {
	t.Helper()
	var last string
	waitFor(t, total, func() error {
		last = screen(t, c, iid, name).Screen
		if !strings.Contains(last, want) {
			return fmt.Errorf("screen of %s has no %q:\n%s", name, want, last)
		}
		return nil
	})
	return last
}

func input(t testing.TB, c *ep.Client, iid, name, text string) client.InputReply {
	t.Helper()
	r, err := mgr(c).Input(ctxT(t), client.Seat{Name: name, Manager: iid}, text, true)
	if err != nil {
		t.Fatalf("input to %s: %v", name, err)
	}
	return r
}

// killSeats SIGKILLs every running seat of the manager on iid.
func (h *harness) killSeats(iid string) {
	cs, err := mgr(h.c).Census(ctxT(h.t), iid)
	if err != nil {
		return
	}
	for _, x := range cs.Running() {
		_, _ = mgr(h.c).Stop(ctxT(h.t), x.Seat(), false)
	}
}

// ready spawns persona and waits until its goal succeeded.
func (h *harness) ready(persona string) client.SpawnAccepted {
	h.t.Helper()
	acc := mustSpawn(h.t, h.c, h.iid, client.SpawnArgs{Persona: persona})
	if res := goal(h.t, h.c, h.iid, acc.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
		h.t.Fatalf("spawn of %s: goal %s (%+v), want succeeded", persona, res.State, res.Error)
	}
	return acc
}

// errCode is the ep error code of err, or fails.
func errCode(t testing.TB, err error) *proto.Error {
	t.Helper()
	e := proto.AsError(err)
	if e == nil {
		t.Fatalf("want an *proto.Error, got %v", err)
	}
	return e
}

// countFiles counts the regular files under dir (0 when it does not exist).
func countFiles(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}
