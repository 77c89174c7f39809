package attach_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/seat/attach"
)

func TestAttachTypeAndSeeEcho(t *testing.T) {
	m := startMesh(t, attach.RegistryOptions{})
	seat := startSeat(t, 80, 24, "sh")
	testutil.WaitFor(t, 5*time.Second, func() error {
		if !strings.Contains(seat.Screen(), "$") {
			return fmt.Errorf("no prompt yet")
		}
		return nil
	})
	a := m.attachTo(seat, "shell", testHolder("alice"), m.conn(), 80, 24, nil)
	a.screen.waitFor(t, "$")
	typeKeys(t, a.client, "echo hi-$((40+2))\r")
	a.screen.waitFor(t, "hi-42")
	if !strings.Contains(seat.Screen(), "hi-42") {
		t.Fatalf("the seat's own screen lacks the echo:\n%s", seat.Screen())
	}
	// The counters are added once the seat took the bytes and the rail
	// sent them, which the echo on the holder's screen can overtake.
	var st []attach.Stats
	testutil.WaitFor(t, 5*time.Second, func() error {
		st = m.reg.Sessions("shell")
		if len(st) != 1 || !st[0].Live || st[0].BytesIn != int64(len("echo hi-$((40+2))\r")) || st[0].BytesOut == 0 || st[0].Holder.ID != "local.alice" {
			return fmt.Errorf("sessions %+v", st)
		}
		return nil
	})
	if len(st[0].ID) != 8 || !strings.HasPrefix(a.grant.SessionID, st[0].ID) {
		t.Errorf("stats id %q; want the session id's first 8 characters", st[0].ID)
	}
}

// The first screen is the seat's current one; a second ready paints it
// afresh; the holder's size reaches the seat before the first screen.
func TestRepaintOnReady(t *testing.T) {
	m := startMesh(t, attach.RegistryOptions{})
	seat := startSeat(t, 80, 24, "sh", "-c", `printf 'drawn-before-attach\n'; exec sh`)
	testutil.WaitFor(t, 5*time.Second, func() error {
		if !strings.Contains(seat.Screen(), "drawn-before-attach") {
			return fmt.Errorf("not drawn yet")
		}
		return nil
	})
	a := m.attachTo(seat, "shell", testHolder("alice"), m.conn(), 100, 30, nil)
	a.screen.waitFor(t, "drawn-before-attach")
	if cols, rows := seat.Size(); cols != 100 || rows != 30 {
		t.Fatalf("seat size %dx%d; want the holder's 100x30", cols, rows)
	}

	a.screen.reset()
	if txt := a.screen.text(); txt != "" {
		t.Fatalf("reset screen shows %q", txt)
	}
	if err := a.client.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	a.screen.waitFor(t, "drawn-before-attach")

	// Output after the repaint continues from it.
	typeKeys(t, a.client, "echo after-$((1+1))\r")
	a.screen.waitFor(t, "after-2")
	testutil.WaitFor(t, 5*time.Second, func() error {
		if got, want := a.screen.text(), seat.Screen(); got != want {
			return fmt.Errorf("holder's screen\n%s\nseat's screen\n%s", got, want)
		}
		return nil
	})
}

// Output the seat writes while the holder is attached, in bursts that wrap
// around and scroll, ends on the holder's screen exactly as on the seat's.
// Each burst is 40 lines, fewer than the 64 frames of the credit window
// even one line a frame, with a pause after it: a holder that keeps up
// (credits a burst within the pause, slow as the race detector makes it)
// loses nothing.
func TestLiveOutputMatchesSeatScreen(t *testing.T) {
	m := startMesh(t, attach.RegistryOptions{})
	seat := startSeat(t, 60, 15, "sh", "-c", `read go; i=0; while [ $i -lt 400 ]; do echo "line $i $(printf '%0*d' $((i % 90)) 0)"; i=$((i+1)); if [ $((i % 40)) -eq 0 ]; then sleep 0.05; fi; done; echo counted; exec sh`)
	a := m.attachTo(seat, "shell", testHolder("alice"), m.conn(), 60, 15, nil)
	typeKeys(t, a.client, "go\r")
	a.screen.waitFor(t, "counted")
	testutil.WaitFor(t, 5*time.Second, func() error {
		if got, want := a.screen.text(), seat.Screen(); got != want {
			return fmt.Errorf("holder's screen\n%s\nseat's screen\n%s", got, want)
		}
		return nil
	})
	if st := m.reg.Sessions(""); len(st) != 1 || st[0].Dropped != 0 {
		t.Fatalf("a holder that keeps up lost output: %+v", st)
	}
}

func TestSeveralSessionsOnOneSeat(t *testing.T) {
	m := startMesh(t, attach.RegistryOptions{})
	seat := startSeat(t, 80, 24, "sh")
	a := m.attachTo(seat, "shell", testHolder("alice"), m.conn(), 80, 24, nil)
	b := m.attachTo(seat, "shell", testHolder("bob"), m.conn(), 80, 24, nil)
	typeKeys(t, a.client, "echo from-$((1+0))-alice\r")
	a.screen.waitFor(t, "from-1-alice")
	b.screen.waitFor(t, "from-1-alice")
	typeKeys(t, b.client, "echo from-$((1+1))-bob\r")
	a.screen.waitFor(t, "from-2-bob")
	b.screen.waitFor(t, "from-2-bob")

	// Interleaved input lands in the order it arrives: alice starts a
	// line, bob ends it.
	typeKeys(t, a.client, "echo join")
	testutil.WaitFor(t, 5*time.Second, func() error {
		if !strings.Contains(seat.Screen(), "echo join") {
			return fmt.Errorf("alice's half not on the seat yet")
		}
		return nil
	})
	typeKeys(t, b.client, "ed-$((2*2))\r")
	a.screen.waitFor(t, "joined-4")

	st := m.reg.Sessions("shell")
	if len(st) != 2 || st[0].Holder.ID != "local.alice" || st[1].Holder.ID != "local.bob" {
		t.Fatalf("sessions %+v", st)
	}
	a.client.Close()
	a.waitEnd(t, attach.ReasonClosed)
	testutil.WaitFor(t, 5*time.Second, func() error {
		if st := m.reg.Sessions("shell"); len(st) != 1 || st[0].Holder.ID != "local.bob" {
			return fmt.Errorf("sessions after alice left: %+v", st)
		}
		return nil
	})
	typeKeys(t, b.client, "echo still-$((3*3))\r")
	b.screen.waitFor(t, "still-9")
}

// queryGate records who answers terminal queries while delegating to the
// seat.
type queryGate struct {
	attach.Terminal
	mu    sync.Mutex
	calls []bool
}

func (q *queryGate) SetAnswerQueries(on bool) {
	q.mu.Lock()
	q.calls = append(q.calls, on)
	q.mu.Unlock()
	q.Terminal.SetAnswerQueries(on)
}

func (q *queryGate) seen() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return fmt.Sprint(q.calls)
}

// While anyone is attached their terminal answers the seat's queries; the
// seat answers again only once the last one leaves.
func TestAnswerQueriesWhileAttached(t *testing.T) {
	m := startMesh(t, attach.RegistryOptions{})
	gate := &queryGate{Terminal: startSeat(t, 80, 24, "sh")}
	a := m.attachTo(gate, "shell", testHolder("alice"), m.conn(), 80, 24, nil)
	b := m.attachTo(gate, "shell", testHolder("bob"), m.conn(), 80, 24, nil)
	if got := gate.seen(); got != "[false]" {
		t.Fatalf("with two attached: %s", got)
	}
	a.client.Close()
	a.waitEnd(t, attach.ReasonClosed)
	testutil.WaitFor(t, 5*time.Second, func() error {
		if len(m.reg.Sessions("")) != 1 {
			return fmt.Errorf("alice's session not reaped")
		}
		return nil
	})
	if got := gate.seen(); got != "[false]" {
		t.Fatalf("with one still attached: %s", got)
	}
	b.client.Close()
	b.waitEnd(t, attach.ReasonClosed)
	testutil.WaitFor(t, 5*time.Second, func() error {
		if got := gate.seen(); got != "[false true]" {
			return fmt.Errorf("after both left: %s", got)
		}
		return nil
	})
}
