package seat_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/attach"
	"github.com/cotal-go/cotal/seat/client"
)

// screenLog collects what an attach session shows.
type screenLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *screenLog) write(p []byte) {
	l.mu.Lock()
	l.buf.Write(p)
	l.mu.Unlock()
}

func (l *screenLog) has(s string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !strings.Contains(l.buf.String(), s) {
		return fmt.Errorf("%q not shown yet", s)
	}
	return nil
}

// dialSeat attaches c's caller to a seat through its manager.
func dialSeat(t *testing.T, c *ep.Client, s client.Seat) (*attach.Client, *screenLog) {
	t.Helper()
	raw, err := client.New(c).Attach(ctxT(t), s)
	if err != nil {
		t.Fatalf("attach %s: %v", s.Name, err)
	}
	g, err := attach.ParseGrant(raw)
	if err != nil {
		t.Fatal(err)
	}
	log := &screenLog{}
	ac, err := attach.Dial(ctxT(t), c.Conn(), g, attach.ClientOptions{Cols: 80, Rows: 24, OnData: log.write})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ac.Close)
	return ac, log
}

// TestAttachThroughTheManager: the operator attaches to a seat, types and
// sees the echo, ps lists the session; stopping the seat ends the session
// with target-despawn.
func TestAttachThroughTheManager(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell"})
	if res := goal(t, h.c, h.iid, acc.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
		t.Fatalf("spawn: %s %+v", res.State, res.Error)
	}
	ac, log := dialSeat(t, h.c, client.Seat{Name: acc.Name, Manager: h.iid})
	if err := ac.Keys(ctxT(t), []byte("echo attached-$((6*7))\r")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() error { return log.has("attached-42") })
	r, _ := row(ps(t, h.c, h.iid), acc.Name)
	if len(r.Sessions) != 1 || r.Sessions[0].Holder != h.caller.ID() || !r.Sessions[0].Live {
		t.Fatalf("ps sessions of the seat: %+v", r.Sessions)
	}
	mustCall(t, h.c, h.iid, "despawn", map[string]any{"name": acc.Name, "graceful": false}, nil)
	select {
	case <-ac.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session outlived its seat")
	}
	if why, _ := ac.End(); why != attach.ReasonTargetDespawn {
		t.Fatalf("session ended %q, want %q", why, attach.ReasonTargetDespawn)
	}
}

// TestAttachInOwnerMode: a spawn-capable agent attaches to the seat it
// spawned over its own credential; another agent is refused that seat.
func TestAttachInOwnerMode(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	alice := h.agentClient("alice", broker.CapSpawn)
	bob := h.agentClient("bob", broker.CapSpawn)
	mine := mustSpawn(t, alice, h.iid, client.SpawnArgs{Persona: "shell", Name: "mine"})
	if res := goal(t, alice, h.iid, mine.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
		t.Fatalf("spawn: %s %+v", res.State, res.Error)
	}
	target := client.Seat{Name: mine.Name, Manager: h.iid, Owner: mine.Owner, UID: mine.UID}
	ac, log := dialSeat(t, alice, target)
	if err := ac.Keys(ctxT(t), []byte("echo owner-$((5*5))\r")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() error { return log.has("owner-25") })

	_, err := client.New(bob).Attach(ctxT(t), target)
	var e *proto.Error
	if !errors.As(err, &e) || e.Code != proto.CodePermissionDenied {
		t.Fatalf("another agent attaching to alice's seat: %v, want permission-denied", err)
	}
}

// TestKeysAreTypedRaw: named keys reach the program as keys, not a paste.
func TestKeysAreTypedRaw(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell"})
	if res := goal(t, h.c, h.iid, acc.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
		t.Fatalf("spawn: %s %+v", res.State, res.Error)
	}
	c := client.New(h.c)
	s := client.Seat{Name: acc.Name, Manager: h.iid}
	if _, err := c.Keys(ctxT(t), s, "e", "c", "h", "o", "Space", "k", "e", "y", "s", "-", "o", "k", "Enter"); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, h.c, h.iid, acc.Name, "keys-ok", 5*time.Second)
	if _, err := c.Keys(ctxT(t), s, "Escape", "NoSuchKey"); err == nil || !strings.Contains(err.Error(), "NoSuchKey") {
		t.Fatalf("an unknown key name: %v, want a refusal naming it", err)
	}
}
