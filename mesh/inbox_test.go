package mesh_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// storeFrame writes a durable channel copy of body onto a member's DLV
// subject, as the delivery service does.
func (h *harness) storeFrame(t *testing.T, p wire.Principal, uid, channel, body string) {
	t.Helper()
	frame := nats.NewMsg(wire.DlvSubject(space, p, uid))
	frame.Header.Set(mesh.FrameHeader, "1")
	frame.Data = []byte(`{"version":1,"channel":` + jsonString(channel) + `,"msg":` + body + `}`)
	if _, err := h.js.PublishMsg(ctxT(t), frame); err != nil {
		t.Fatal(err)
	}
}

// dlvAckPending is how many copies the member's backstop has handed out
// and not had acked.
func (h *harness) dlvAckPending(t *testing.T, p wire.Principal, uid string) int {
	t.Helper()
	c, err := h.js.Consumer(ctxT(t), wire.DlvStream(space), wire.DlvConsumer(p, uid))
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return info.NumAckPending
}

// A stored copy of an id whose live copy is still unread is the item's
// ack handle: acked only when the item is handed over, so a crash before
// the read loses nothing.
func TestStoredCopyOfAPendingLiveItemIsAckedOnlyWhenTaken(t *testing.T) {
	h := newHarness(t, false)
	path, id := h.mint(alice)
	a := h.connect(path, mesh.Options{})
	body := envelope("same", "local.carol", `"channel":"team"`)
	h.op.Publish("cotal."+space+".chat.local.carol.team", []byte(body))
	testutil.WaitFor(t, 5*time.Second, func() error {
		if a.Pending() != 1 {
			return fmt.Errorf("%d items pending", a.Pending())
		}
		return nil
	})
	// The delivery service stores its copy for alice's durable hold; the
	// test waits for that copy rather than writing one of its own, which
	// the service's, landing later, would follow.
	testutil.WaitFor(t, 5*time.Second, func() error {
		st, err := h.js.Stream(ctxT(t), wire.DlvStream(space))
		if err != nil {
			return err
		}
		m, err := st.GetLastMsgForSubject(ctxT(t), wire.DlvSubject(space, id.Principal, id.UID))
		if err != nil {
			return err
		}
		if !strings.HasPrefix(m.Header.Get(nats.MsgIdHdr), "same:") {
			return fmt.Errorf("the newest stored copy is %q", m.Header.Get(nats.MsgIdHdr))
		}
		return nil
	})
	// A second copy behind it: once it is in the inbox, the backstop's
	// handler has finished with the first.
	h.storeFrame(t, id.Principal, id.UID, "team", envelope("marker", "local.carol", `"channel":"team"`))
	testutil.WaitFor(t, 5*time.Second, func() error {
		if a.Pending() != 2 {
			return fmt.Errorf("%d items pending", a.Pending())
		}
		return nil
	})
	if n := h.dlvAckPending(t, id.Principal, id.UID); n != 2 {
		t.Fatalf("%d stored copies un-acked while both items are unread; want 2 (none acked before its hand-over)", n)
	}
	it := next(t, a)
	if it.Msg.ID != "same" || !it.Durable {
		t.Fatalf("first item %q durable=%v; want the live item holding its stored copy", it.Msg.ID, it.Durable)
	}
	if err := it.Ack(); err != nil {
		t.Fatal(err)
	}
	if err := next(t, a).Ack(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		return h.consumerSettled(wire.DlvStream(space), wire.DlvConsumer(id.Principal, id.UID))
	})
	none(t, a, 200*time.Millisecond)
}

// A peeked stored copy comes back to the same connection: giving it back
// undoes its hand-over.
func TestPeekedStoredCopyComesBackToTheSameConnection(t *testing.T) {
	h := newHarness(t, false)
	path, id := h.mint(alice)
	a := h.connect(path, mesh.Options{})
	h.storeFrame(t, id.Principal, id.UID, "team", envelope("peeked", "local.carol", `"channel":"team"`))
	it := next(t, a)
	if err := it.Release(); err != nil {
		t.Fatal(err)
	}
	again := next(t, a)
	if again.Msg.ID != "peeked" || !again.Durable {
		t.Fatalf("after a peek got %q durable=%v", again.Msg.ID, again.Durable)
	}
	if err := again.Ack(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		return h.consumerSettled(wire.DlvStream(space), wire.DlvConsumer(id.Principal, id.UID))
	})
}

// A one-shot reader carries what it handed over to its next run: a copy
// the broker hands out again (here: its ack never arrived, as when the
// mesh dies before the ack is on disk) is acked silently, not shown twice.
func TestHandedOverCarriesToTheNextReader(t *testing.T) {
	h := newHarness(t, false)
	path, id := h.mint(alice)
	cons, err := h.js.Consumer(ctxT(t), wire.DMStream(space), wire.DMConsumer(id.Principal, id.UID))
	if err != nil {
		t.Fatal(err)
	}
	cfg := cons.CachedInfo().Config
	cfg.AckWait = time.Second
	if _, err := h.js.UpdateConsumer(ctxT(t), wire.DMStream(space), cfg); err != nil {
		t.Fatal(err)
	}
	h.raw(wire.DMSubject(space, id.Principal, wire.Principal{Owner: "local", Actor: "carol"}), envelope("", "local.carol", `"to":"local.alice"`))
	first := h.connect(path, mesh.Options{OneShot: true, Subscribe: []string{}})
	items, err := first.Collect(ctxT(t), 2*time.Second)
	if err != nil || len(items) != 1 {
		t.Fatalf("first read: %d items, %v", len(items), err)
	}
	handled := first.Handled() // shown; its ack is lost
	_ = first.Close()

	next := h.connect(path, mesh.Options{OneShot: true, Subscribe: []string{}})
	next.AssumeHandled(handled)
	testutil.WaitFor(t, 10*time.Second, func() error {
		items, err := next.Collect(ctxT(t), 0)
		if err != nil {
			return err
		}
		if len(items) != 0 {
			t.Fatalf("the copy handed over before came again: %q", items[0].Msg.Text())
		}
		return h.consumerSettled(wire.DMStream(space), wire.DMConsumer(id.Principal, id.UID))
	})
}
