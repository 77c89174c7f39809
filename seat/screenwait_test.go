package seat_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// A screen call with until waits at the manager: it answers the first
// screen that shows the text (matched), after its wait the last screen it
// saw (not matched), and at once the final screen of a seat whose output
// ended. A wait without a text, a wait past the bound and a text past its
// bound are bad requests.
func TestScreenUntilWaitsAtTheManager(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	acc := h.ready("shell")
	s := client.Seat{Name: acc.Name, Manager: h.iid}
	m := mgr(h.c)

	// The marker is split in the command, so only the output shows it whole.
	done := make(chan client.ScreenReply, 1)
	fail := make(chan error, 1)
	go func() {
		r, err := m.ScreenUntil(ctxT(t), s, "until-marker", 10*time.Second)
		if err != nil {
			fail <- err
			return
		}
		done <- r
	}()
	input(t, h.c, h.iid, acc.Name, "sleep 0.3; echo until-mark''er")
	select {
	case err := <-fail:
		t.Fatal(err)
	case r := <-done:
		if r.Matched == nil || !*r.Matched || !strings.Contains(r.Screen, "until-marker") || !r.Running {
			t.Fatalf("the wait for the marker answered %+v", r)
		}
	}

	start := time.Now()
	r, err := m.ScreenUntil(ctxT(t), s, "never-shown", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.Matched == nil || *r.Matched || !strings.Contains(r.Screen, "until-marker") || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("a wait for what never comes answered %+v after %s", r, time.Since(start))
	}
	if plain := screen(t, h.c, h.iid, acc.Name); plain.Matched != nil {
		t.Fatalf("a plain screen call says matched: %+v", plain)
	}

	for _, a := range []client.ScreenArgs{
		{Name: acc.Name, WaitMs: 100},
		{Name: acc.Name, Until: "x", WaitMs: client.MaxScreenWait.Milliseconds() + 1},
		{Name: acc.Name, Until: strings.Repeat("x", client.MaxScreenUntil+1)},
	} {
		_, err := h.c.Call(ctxT(t), wire.ManagerEndpoint, wire.ManagerScreen, a, ep.On(h.iid), anyMode(acc))
		if e := errCode(t, err); e.Code != proto.CodeBadRequest || e.EffectiveOutcome() != proto.NotExecuted {
			t.Errorf("screen %+v: %v, want bad-request not-executed", a, e)
		}
	}
	if _, err := m.ScreenUntil(ctxT(t), s, "", time.Second); err == nil {
		t.Error("the client sent a wait for no text")
	}

	input(t, h.c, h.iid, acc.Name, "exit")
	waitFor(t, 10*time.Second, func() error {
		if r := screen(t, h.c, h.iid, acc.Name); r.Running {
			return fmt.Errorf("the seat still runs:\n%s", r.Screen)
		}
		return nil
	})
	// A wait of 20 s on a seat whose output ended answers at once: well
	// before its wait, whatever the machine's speed.
	start = time.Now()
	r, err = m.ScreenUntil(ctxT(t), s, "never-shown", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); r.Running || r.Matched == nil || *r.Matched || took >= 20*time.Second {
		t.Fatalf("a wait on an ended seat answered %+v after %s", r, took)
	}
}
