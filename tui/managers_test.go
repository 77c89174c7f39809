package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/client"
)

// The test below imports app (and through it seat/) only to host a real
// manager; the tui package itself never does.

// hostManagers starts a mesh with a manager and personas, and returns the
// dashboard's Managers over it as the operator, with a count of its dials.
func hostManagers(t *testing.T, personas map[string]string) (*Managers, string, *atomic.Int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	project := t.TempDir()
	dir := config.AgentsDir(project)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range personas {
		if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte("---\nname: "+name+"\n"+body+"\n---\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := config.Paths{Space: testSpace, StoreDir: t.TempDir()}
	m, err := host.Start(ctx, host.Config{Paths: p, ProjectDir: project, Readiness: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	op, err := broker.ReadCredsIdentity(p.OperatorCreds())
	if err != nil {
		t.Fatal(err)
	}
	dials := &atomic.Int32{}
	dial := func() (*client.Client, error) {
		dials.Add(1)
		nc, err := m.Broker().Connect("dashboard")
		if err != nil {
			return nil, err
		}
		c, err := ep.NewClient(nc, ep.ClientOptions{Space: testSpace, Caller: proto.Caller{Owner: op.Principal.Owner, Actor: op.Principal.Actor, UID: op.UID}})
		if err != nil {
			nc.Close()
			return nil, err
		}
		return client.New(c), nil
	}
	list := func(context.Context) ([]client.PersonaChoice, error) {
		return []client.PersonaChoice{{Name: "quick", Harness: "command"}, {Name: "shell", Harness: "command"}}, nil
	}
	d := NewManagers(dial, list, m.Manager().InstanceID())
	t.Cleanup(d.Close)
	return d, m.Manager().InstanceID(), dials
}

// TestManagersDriveARealManager: the dashboard's seat source and control
// over a real manager: an empty census, a spawn followed to its outcome,
// the seat in the census on this clock, typing and reading its screen,
// stopping it, a failed spawn in the manager's words, a redial after the
// connection closed, and refusals once closed.
func TestManagersDriveARealManager(t *testing.T) {
	d, iid, dials := hostManagers(t, map[string]string{
		"shell": "agent: command\ncommand: sh",
		"quick": "agent: command\ncommand: sh\nargs: [\"-c\", \"echo leaving now; exit 7\"]",
	})
	ctx := func() context.Context {
		c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		t.Cleanup(cancel)
		return c
	}
	cs, err := d.Seats(ctx())
	if err != nil || cs.Managers != 1 || len(cs.Seats) != 0 || len(cs.Missing) != 0 {
		t.Fatalf("census of a fresh manager: %+v %v", cs, err)
	}

	before := time.Now()
	tk, err := d.Spawn(ctx(), "shell")
	if err != nil || tk.Name != "shell" || tk.Manager != iid || tk.GoalID == "" || tk.Deadline != 5*time.Second {
		t.Fatalf("spawn: %+v %v", tk, err)
	}
	select {
	case <-d.Changes():
	default:
		t.Fatal("a spawn did not ask for a new census")
	}
	if o, err := d.AwaitSpawn(ctx(), tk); err != nil || o.State != SpawnSucceeded {
		t.Fatalf("await: %+v %v", o, err)
	}
	cs, err = d.Seats(ctx())
	if err != nil || len(cs.Seats) != 1 {
		t.Fatalf("census after the spawn: %+v %v", cs, err)
	}
	s := cs.Seats[0]
	if s.Name != "shell" || s.PeerID != "local.shell" || s.Manager != iid || !s.Running() || s.PID == 0 || s.Harness != "command" {
		t.Fatalf("the seat: %+v", s)
	}
	if s.Started.Before(before.Add(-time.Second)) || s.Started.After(time.Now()) {
		t.Fatalf("started %s, want between %s and now", s.Started, before)
	}

	n, err := d.Input(ctx(), s, "echo dash-$((6*7))")
	if err != nil || n != len("echo dash-$((6*7))")+1 {
		t.Fatalf("input: %d %v", n, err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		scr, err := d.Screen(ctx(), s)
		if err != nil {
			return err
		}
		if !scr.Running || !strings.Contains(scr.Text, "dash-42") {
			return fmt.Errorf("screen (running %v):\n%s", scr.Running, scr.Text)
		}
		return nil
	})
	// An interactive sh ignores SIGTERM: the graceful stop hangs it up.
	if process, err := d.Stop(ctx(), s); err != nil || process != "killed SIGHUP" {
		t.Fatalf("stop: %q %v", process, err)
	}

	tk, err = d.Spawn(ctx(), "quick")
	if err != nil {
		t.Fatal(err)
	}
	o, err := d.AwaitSpawn(ctx(), tk)
	if err != nil || o.State != SpawnFailed || !strings.Contains(o.Message, "exit status 7") {
		t.Fatalf("a spawn that exits at once: %+v %v", o, err)
	}

	// A connection that closed is dialled again on the next call.
	d.mu.Lock()
	d.c.EP().Conn().Close()
	d.mu.Unlock()
	if _, err := d.Seats(ctx()); err != nil || dials.Load() != 2 {
		t.Fatalf("census after the connection closed: %v, %d dials", err, dials.Load())
	}
	d.Close()
	if _, err := d.Seats(ctx()); err == nil || dials.Load() != 2 {
		t.Fatalf("census after Close: %v, %d dials", err, dials.Load())
	}
}
