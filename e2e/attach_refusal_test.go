package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/attach"
	"github.com/cotal-go/cotal/seat/client"
)

// agent is a minted identity connected as its own process would be,
// with the broker's refusals of its publishes and subscribes collected.
type agent struct {
	t    *testing.T
	name string
	id   mintedID
	nc   *nats.Conn
	mgr  *client.Client

	mu      sync.Mutex
	refused []string
}

// connectAgent mints name with the spawn capability (or reuses id) and
// connects it to the mesh of space "seats".
func connectAgent(t *testing.T, home, dir, name string, id *mintedID) *agent {
	t.Helper()
	a := &agent{t: t, name: name}
	if id != nil {
		a.id = *id
	} else {
		out, stderr, code := runIn(t, home, dir, "mint", name, "--json", "--capability", "spawn")
		if code != 0 || json.Unmarshal([]byte(out), &a.id) != nil || a.id.Creds == "" {
			t.Fatalf("mint %s: exit %d\n%s%s", name, code, out, stderr)
		}
	}
	out, _, code := runIn(t, home, dir, "status", "--json")
	var st status
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.URL == "" {
		t.Fatalf("status --json: exit %d\n%s", code, out)
	}
	nc, err := nats.Connect(st.URL, nats.UserCredentials(a.id.Creds),
		nats.CustomInboxPrefix("_INBOX_local-"+name+"-"+a.id.LifecycleUID),
		nats.Timeout(5*time.Second), nats.MaxReconnects(0),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			a.mu.Lock()
			a.refused = append(a.refused, err.Error())
			a.mu.Unlock()
		}))
	if err != nil {
		t.Fatalf("connecting as %s: %v", name, err)
	}
	t.Cleanup(nc.Close)
	c, err := ep.NewClient(nc, ep.ClientOptions{Space: "seats", Caller: proto.Caller{Owner: "local", Actor: name, UID: a.id.LifecycleUID}})
	if err != nil {
		t.Fatal(err)
	}
	a.nc, a.mgr = nc, client.New(c)
	return a
}

// wasRefused waits for the broker's refusal of op ("publish" or
// "subscription") on subject.
func (a *agent) wasRefused(op, subject string) {
	a.t.Helper()
	want := strings.ToLower(fmt.Sprintf("permissions violation for %s to %q", op, subject))
	waitFor(a.t, 10*time.Second, func() error {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, e := range a.refused {
			if strings.Contains(strings.ToLower(e), want) {
				return nil
			}
		}
		return fmt.Errorf("%s: no refusal of %s on %s (so far: %v)", a.name, op, subject, a.refused)
	})
}

func (a *agent) cleanRecord() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.refused) > 0 {
		a.t.Errorf("%s was refused: %v", a.name, a.refused)
	}
}

// spawnAndAttach spawns a shell seat named name it owns and attaches to
// it, returning the seat, its grant and the session.
func (a *agent) spawnAndAttach(name string) (client.Seat, json.RawMessage, *session) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sp, err := a.mgr.Spawn(ctx, client.SpawnArgs{Persona: "shell", Name: name}, "")
	if err != nil {
		a.t.Fatalf("%s spawning %s: %v", a.name, name, err)
	}
	if res, err := a.mgr.AwaitSpawn(ctx, sp, client.Watch{}); err != nil || res.State != ep.GoalSucceeded {
		a.t.Fatalf("%s spawning %s: %v %+v", a.name, name, err, res)
	}
	s := client.Seat{Name: sp.Name, Manager: sp.Manager, Owner: sp.Owner, UID: sp.UID}
	raw, err := a.mgr.Attach(ctx, s)
	if err != nil {
		a.t.Fatalf("%s attaching to %s: %v", a.name, name, err)
	}
	return s, raw, a.dial(raw)
}

// session is one dialled grant and what it has shown.
type session struct {
	t *testing.T
	c *attach.Client

	mu  sync.Mutex
	out bytes.Buffer
}

func (a *agent) dial(raw json.RawMessage) *session {
	a.t.Helper()
	g, err := attach.ParseGrant(raw)
	if err != nil {
		a.t.Fatal(err)
	}
	s := &session{t: a.t}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := attach.Dial(ctx, a.nc, g, attach.ClientOptions{Cols: 80, Rows: 24, OnData: func(p []byte) {
		s.mu.Lock()
		s.out.Write(p)
		s.mu.Unlock()
	}})
	if err != nil {
		a.t.Fatalf("%s dialling a grant: %v", a.name, err)
	}
	a.t.Cleanup(c.Close)
	s.c = c
	return s
}

func (s *session) shown() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

func (s *session) typeKeys(text string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.c.Keys(ctx, []byte(text)) // a refused session may never give credit
}

func (s *session) waitShown(want string) {
	s.t.Helper()
	waitFor(s.t, 10*time.Second, func() error {
		if !strings.Contains(s.shown(), want) {
			return fmt.Errorf("the session has not shown %q:\n%q", want, s.shown())
		}
		return nil
	})
}

// TestAttachRefusals: an agent attaches to the seat it spawned through
// the manager; another agent holding that grant, or reaching for any
// session subject, is refused by the broker and never types into the
// seat; the manager refuses it a session of its own on that seat; a
// second use of the grant gets no screen; a grant from before a manager
// restart reaches nothing of the new one.
func TestAttachRefusals(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, shellPersona)
	alice := connectAgent(t, home, dir, "alice", nil)
	mallory := connectAgent(t, home, dir, "mallory", nil)
	seat, raw, mine := alice.spawnAndAttach("mine")
	mine.typeKeys("echo alice-$((6*7))\r")
	mine.waitShown("alice-42")
	g, err := attach.ParseGrant(raw)
	if err != nil {
		t.Fatal(err)
	}

	// Mallory, holding alice's grant: every publish and subscribe on the
	// session is the broker's to refuse.
	stolen := mallory.dial(raw)
	stolen.typeKeys("echo mallory-was-here\r")
	for _, subj := range []string{g.Subjects.Out, g.Subjects.In, "cotal.seats.eps.>"} {
		if _, err := mallory.nc.SubscribeSync(subj); err != nil {
			t.Fatal(err)
		}
	}
	if err := mallory.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	mallory.wasRefused("subscription", g.Subjects.Out)
	mallory.wasRefused("subscription", g.Subjects.In)
	mallory.wasRefused("subscription", "cotal.seats.eps.>")
	mallory.wasRefused("publish", g.Subjects.In)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := mallory.mgr.Attach(ctx, seat); proto.AsError(err) == nil || proto.AsError(err).Code != proto.CodePermissionDenied {
		t.Fatalf("mallory asking for a session on alice's seat: %v, want permission-denied", err)
	}
	mine.typeKeys("echo still-$((6*6))\r")
	mine.waitShown("still-36")
	if s := seatScreen(t, home, dir, "mine"); strings.Contains(s, "mallory-was-here") {
		t.Fatalf("mallory typed into alice's seat:\n%s", s)
	}
	if stolen.shown() != "" {
		t.Fatalf("mallory saw alice's seat: %q", stolen.shown())
	}

	// Alice's second use of the grant: its session is taken, so no
	// screen comes, and its rail breaks at the first frame it hears.
	again := alice.dial(raw)
	mine.typeKeys("echo more-$((7*7))\r")
	select {
	case <-again.c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a second use of a grant is still open")
	}
	var fe *attach.FaultError
	if _, err := again.c.End(); !errors.As(err, &fe) || again.shown() != "" {
		t.Fatalf("a second use of a grant ended %v having shown %q; want a broken rail and nothing", err, again.shown())
	}
	alice.cleanRecord()

	// A restart (a new epoch): the old grant reaches nothing, a new one
	// works.
	if _, stderr, code := runIn(t, home, dir, "down", "--with-agents"); code != 0 {
		t.Fatalf("down: %s", stderr)
	}
	if _, stderr, code := runIn(t, home, dir, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	alice = connectAgent(t, home, dir, "alice", &alice.id)
	_, _, fresh := alice.spawnAndAttach("mine")
	stale := alice.dial(raw)
	stale.typeKeys("echo stale-$((1+1))\r")
	fresh.typeKeys("echo fresh-$((2+2))\r")
	fresh.waitShown("fresh-4")
	if s := seatScreen(t, home, dir, "mine"); strings.Contains(s, "stale-") {
		t.Fatalf("a grant from before the restart typed into the new seat:\n%s", s)
	}
	if stale.shown() != "" {
		t.Fatalf("a grant from before the restart was served: %q", stale.shown())
	}
}
