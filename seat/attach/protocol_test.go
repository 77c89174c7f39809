package attach_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/seat/attach"
)

// serveRaw serves a session on seat and returns its grant, for a test that
// speaks the holder's side by hand.
func (m *mesh) serveRaw(seat attach.Terminal, holder attach.Holder) (attach.Grant, *attach.Server) {
	m.t.Helper()
	g, err := m.reg.Offer(attach.Target{Name: "shell"}, holder)
	if err != nil {
		m.t.Fatal(err)
	}
	raw, _ := g.Marshal()
	if g, _, err = m.reg.Redeem(raw, holder); err != nil {
		m.t.Fatal(err)
	}
	srv, err := m.reg.Serve(testmesh.Ctx(m.t), m.server, g, seat)
	if err != nil {
		m.t.Fatal(err)
	}
	return g, srv
}

// A holder's payload the server cannot read is dropped and the session
// goes on; so is one only the server may send.
func TestGarbledCallerPayloadDropped(t *testing.T) {
	m := startMesh(t, attach.RegistryOptions{})
	seat := startSeat(t, 80, 24, "sh")
	g, srv := m.serveRaw(seat, testHolder("alice"))
	holder, err := attach.OpenRail(testmesh.Ctx(t), m.conn(), g.Subjects.In, g.Subjects.Out, g.Window, func(json.RawMessage) error { return nil }, attach.RailOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(holder.Close)
	for _, p := range []string{
		`{"k":"bogus"}`,
		`{"k":"data","b":"not base64!"}`,
		`{"k":"data","b":"aGk=","extra":1}`,
		`{"k":"resize","cols":0,"rows":10}`,
		`{"k":"end","reason":"closed"}`,
		`{"k":"drop","bytes":5}`,
		`"just a string"`,
		`{"K":"data","b":"aGk="}`,
	} {
		if err := holder.Send([]byte(p)); err != nil {
			t.Fatalf("send %s: %v", p, err)
		}
	}
	keys := base64.StdEncoding.EncodeToString([]byte("echo survived-$((3+4))\r"))
	if err := holder.Send([]byte(`{"k":"data","b":"` + keys + `"}`)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		if !strings.Contains(seat.Screen(), "survived-7") {
			return fmt.Errorf("the valid keys after the garbled ones did not arrive:\n%s", seat.Screen())
		}
		return nil
	})
	if st := srv.Stats(); !st.Live || st.Garbled != 8 {
		t.Fatalf("stats %+v; want live with 8 garbled", st)
	}
}

// The serving side is trusted to speak the protocol: a payload from it the
// client cannot read breaks the session.
func TestGarbledServerPayloadBreaksClient(t *testing.T) {
	for _, p := range []string{`{"k":"ready"}`, `{"k":"data"}`, `{"k":"end","reason":"bored"}`, `[]`} {
		t.Run(p, func(t *testing.T) {
			m := startMesh(t, attach.RegistryOptions{})
			g, err := m.reg.Offer(attach.Target{Name: "shell"}, testHolder("alice"))
			if err != nil {
				t.Fatal(err)
			}
			// A hand-made server side on the grant's subjects.
			fake, err := attach.OpenRail(testmesh.Ctx(t), m.server, g.Subjects.Out, g.Subjects.In, g.Window, func(json.RawMessage) error { return nil }, attach.RailOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(fake.Close)
			c, err := attach.Dial(testmesh.Ctx(t), m.conn(), g, attach.ClientOptions{OnData: func([]byte) {}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			if err := fake.Send([]byte(p)); err != nil {
				t.Fatal(err)
			}
			select {
			case <-c.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("client did not break")
			}
			_, err = c.End()
			var fe *attach.FaultError
			if !errors.As(err, &fe) || fe.Fault != attach.FaultGarbled {
				t.Fatalf("client ended with %v; want garbled-frame", err)
			}
		})
	}
}

// A drop payload comes before the next output, never after the last: the
// holder always ends on a repaint. The rows come to about 1.2 MB, more than
// two frames carry however the session joins the chunks waiting for it.
func TestDropPrecedesOutput(t *testing.T) {
	m := startMesh(t, attach.RegistryOptions{Window: 2})
	seat := startSeat(t, 80, 24, "sh", "-c", `stty -echo; echo ready; read go; awk 'BEGIN { pad = sprintf("%0190d", 0); for (i = 0; i < 6000; i++) print "row " i " " pad }'; echo all-rows; exec sh`)
	var events []string
	hold := make(chan struct{})
	a := m.attachTo(seat, "shell", testHolder("alice"), m.conn(), 80, 24, func(o *attach.ClientOptions, scr *screen) {
		o.OnData = func(p []byte) {
			scr.write(p)
			scr.mu.Lock()
			events = append(events, "data")
			scr.mu.Unlock()
		}
		o.OnDrop = func(n int64) {
			scr.mu.Lock()
			events = append(events, fmt.Sprintf("drop %d", n))
			scr.mu.Unlock()
		}
	})
	a.screen.waitFor(t, "ready")
	a.screen.mu.Lock()
	a.screen.hold = hold
	a.screen.mu.Unlock()
	if _, err := seat.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	// The rows are the seat program's own work, which a loaded machine
	// under the race detector slows: the bound is generous, not a figure.
	testutil.WaitFor(t, time.Minute, func() error {
		if !strings.Contains(seat.Screen(), "all-rows") {
			return fmt.Errorf("rows not done")
		}
		return nil
	})
	close(hold)
	// Ask for the screen again so the holder is up to date even if the
	// last output landed before the drop was noticed.
	typeKeys(t, a.client, "echo synced\r")
	a.screen.waitFor(t, "synced")
	a.screen.mu.Lock()
	defer a.screen.mu.Unlock()
	drops := 0
	for i, e := range events {
		if strings.HasPrefix(e, "drop") {
			drops++
			if i == len(events)-1 || events[i+1] != "data" {
				t.Fatalf("drop at %d not followed by output: %v", i, events[max(0, i-3):min(len(events), i+3)])
			}
		}
	}
	if drops == 0 {
		t.Fatalf("a window of 2 and a stalled holder dropped nothing: %d events", len(events))
	}
}
