package attach_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/seat/attach"
)

func TestEndReasons(t *testing.T) {
	t.Run("process-exit", func(t *testing.T) {
		m := startMesh(t, attach.RegistryOptions{})
		seat := startSeat(t, 80, 24, "sh")
		a := m.attachTo(seat, "shell", testHolder("alice"), m.conn(), 80, 24, nil)
		typeKeys(t, a.client, "echo bye-$((2+3)); exit 0\r")
		a.waitEnd(t, attach.ReasonProcessExit)
		// The last output arrived before the end.
		a.screen.waitFor(t, "bye-5")
	})
	t.Run("target-despawn", func(t *testing.T) {
		m := startMesh(t, attach.RegistryOptions{})
		seat := startSeat(t, 80, 24, "sh")
		other := startSeat(t, 80, 24, "sh")
		a := m.attachTo(seat, "shell", testHolder("alice"), m.conn(), 80, 24, nil)
		b := m.attachTo(other, "other", testHolder("alice"), m.conn(), 80, 24, nil)
		m.reg.EndTarget("shell", attach.ReasonTargetDespawn)
		a.waitEnd(t, attach.ReasonTargetDespawn)
		if !seat.Running() {
			t.Fatal("ending the sessions stopped the seat")
		}
		if st := m.reg.Sessions(""); len(st) != 1 || st[0].Target != "other" {
			t.Fatalf("sessions %+v; want only the other seat's", st)
		}
		typeKeys(t, b.client, "echo other-$((1+1))\r")
		b.screen.waitFor(t, "other-2")
	})
	t.Run("manager-restart", func(t *testing.T) {
		m := startMesh(t, attach.RegistryOptions{})
		seat := startSeat(t, 80, 24, "sh")
		a := m.attachTo(seat, "shell", testHolder("alice"), m.conn(), 80, 24, nil)
		b := m.attachTo(seat, "shell", testHolder("bob"), m.conn(), 80, 24, nil)
		m.reg.Close(attach.ReasonManagerRestart)
		a.waitEnd(t, attach.ReasonManagerRestart)
		b.waitEnd(t, attach.ReasonManagerRestart)
	})
	t.Run("expired", func(t *testing.T) {
		m := startMesh(t, attach.RegistryOptions{TTL: 300 * time.Millisecond})
		seat := startSeat(t, 80, 24, "sh")
		a := m.attachTo(seat, "shell", testHolder("alice"), m.conn(), 80, 24, nil)
		a.waitEnd(t, attach.ReasonExpired)
	})
	t.Run("closed by the holder", func(t *testing.T) {
		m := startMesh(t, attach.RegistryOptions{})
		seat := startSeat(t, 80, 24, "sh")
		a := m.attachTo(seat, "shell", testHolder("alice"), m.conn(), 80, 24, nil)
		a.client.Close()
		a.waitEnd(t, attach.ReasonClosed)
		if r := a.server.Reason(); r != attach.ReasonClosed {
			t.Fatalf("server ended %s", r)
		}
		if !seat.Running() {
			t.Fatal("detaching stopped the seat")
		}
	})
}

// A holder that vanishes without a word (its process killed) is noticed
// within the stall bound: the session ends closed, its slot frees, and the
// seat runs on.
func TestVanishedHolderEndsWithinStallBound(t *testing.T) {
	m := startMesh(t, attach.RegistryOptions{Server: attach.ServerOptions{Rail: attach.RailOptions{Idle: 50 * time.Millisecond, Stall: 500 * time.Millisecond}}})
	seat := startSeat(t, 80, 24, "sh")
	nc := m.conn()
	a := m.attachTo(seat, "shell", testHolder("alice"), nc, 80, 24, nil)
	a.screen.waitFor(t, "$")
	nc.Close() // no close frame: as if the client were SIGKILLed
	start := time.Now()
	select {
	case <-a.server.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the server never noticed the holder was gone")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("noticed after %s; the stall bound is 500ms", d)
	}
	st := a.server.Stats()
	if st.Live || st.Ended != attach.ReasonClosed || st.Fault != string(attach.FaultStall) {
		t.Fatalf("stats %+v; want ended closed by a stall", st)
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		if st := m.reg.Sessions(""); len(st) != 0 {
			return fmt.Errorf("sessions %+v", st)
		}
		return nil
	})
	if !seat.Running() {
		t.Fatal("the seat stopped")
	}
}

// A server that never answers (a grant redeemed and served, the manager
// then wedged) is noticed by the holder the same way.
func TestClientNoticesSilentServer(t *testing.T) {
	m := startMesh(t, attach.RegistryOptions{})
	seat := startSeat(t, 80, 24, "sh")
	a := m.attachTo(seat, "shell", testHolder("alice"), m.conn(), 80, 24, func(o *attach.ClientOptions, _ *screen) {
		o.Rail = attach.RailOptions{Idle: 50 * time.Millisecond, Stall: 500 * time.Millisecond}
	})
	a.screen.waitFor(t, "$")
	m.server.Close() // the serving connection dies without a word
	select {
	case <-a.client.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the client never noticed")
	}
	r, err := a.client.End()
	var fe *attach.FaultError
	if r != attach.ReasonClosed || !errors.As(err, &fe) || fe.Fault != attach.FaultStall {
		t.Fatalf("client ended %s, %v; want closed by a stall", r, err)
	}
}

// A seat that writes a burst and exits at once: the holder gets all of it,
// then the end, and ends on the seat's final screen.
func TestExitRightAfterBurst(t *testing.T) {
	m := startMesh(t, attach.RegistryOptions{})
	for round := range 5 {
		seat := startSeat(t, 80, 24, "sh", "-c", `stty -echo; echo ready; read go; i=0; while [ $i -lt 1500 ]; do echo "burst $i"; i=$((i+1)); done; echo last-line`)
		waitReady(t, seat)
		a := m.attachTo(seat, "burst", testHolder("alice"), m.conn(), 80, 24, nil)
		a.screen.waitFor(t, "ready")
		if _, err := seat.Write([]byte("\r")); err != nil {
			t.Fatal(err)
		}
		<-seat.Done()
		select {
		case <-a.client.Done():
		case <-time.After(3 * time.Second):
			t.Fatalf("round %d: no end 3s after the seat was done", round)
		}
		a.waitEnd(t, attach.ReasonProcessExit)
		if got, want := a.screen.text(), seat.Screen(); got != want {
			t.Fatalf("round %d: holder's final screen\n%s\nseat's\n%s", round, got, want)
		}
	}
}

// A session ended before its holder joined its rail (the manager stopping
// between serving a redeemed grant and the client's first frame) still
// tells the holder why, at once: the end waits for the holder's ready
// instead of landing on nobody and leaving the holder to its stall bound.
func TestEndBeforeTheHolderJoins(t *testing.T) {
	m := startMesh(t, attach.RegistryOptions{})
	seat := startSeat(t, 80, 24, "sh")
	holder := testHolder("alice")
	g, err := m.reg.Offer(attach.Target{Name: "shell"}, holder)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := g.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if g, _, err = m.reg.Redeem(raw, holder); err != nil {
		t.Fatal(err)
	}
	srv, err := m.reg.Serve(testmesh.Ctx(t), m.server, g, seat)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		m.reg.Close(attach.ReasonManagerRestart)
		close(closed)
	}()
	testutil.WaitFor(t, 10*time.Second, func() error {
		if r := srv.Reason(); r != attach.ReasonManagerRestart {
			return fmt.Errorf("server ended %q so far", r)
		}
		return nil
	})
	scr := newScreen(t, 80, 24)
	c, err := attach.Dial(testmesh.Ctx(t), m.conn(), g, attach.ClientOptions{Cols: 80, Rows: 24, OnData: scr.write, OnDrop: scr.dropped})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	a := &attached{grant: g, server: srv, client: c, screen: scr}
	a.waitEnd(t, attach.ReasonManagerRestart)
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the registry's Close did not return")
	}
}
