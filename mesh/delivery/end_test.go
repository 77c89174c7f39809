package delivery_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/wire"
)

func TestEndLifecycleEndsHoldsAndStoredCopies(t *testing.T) {
	h := newHarness(t, false)
	path, id := h.mint(agent{name: "m", subscribe: []string{"team"}})
	first := h.connect(path, mesh.Options{})
	_ = first.Close()
	p := h.poster("poster")
	for i := range 3 {
		post(t, p, "team", fmt.Sprintf("kept %d", i))
	}
	h.settled()
	dlv := wire.DlvSubject(space, id.Principal, id.UID)
	inbox := wire.InboxSubject(space, id.Principal, id.UID)
	if n := h.storedFor(wire.DlvStream(space), dlv); n != 3 {
		t.Fatalf("%d stored copies before the end; want 3", n)
	}

	if err := h.svc.EndLifecycle(ctxT(t), id.Principal, id.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.js.Consumer(ctxT(t), wire.DlvStream(space), wire.DlvConsumer(id.Principal, id.UID)); !errors.Is(err, jetstream.ErrConsumerNotFound) {
		t.Fatalf("backstop durable after the end: %v; want it deleted", err)
	}
	post(t, p, "team", "after the end")
	h.settled()
	if d, i := h.storedFor(wire.DlvStream(space), dlv), h.storedFor(wire.InboxStream(space), inbox); d != 0 || i != 0 {
		t.Fatalf("after the end %d DLV and %d INBOX copies are kept; want none", d, i)
	}
	e := h.connect(path, mesh.Options{OneShot: true, Subscribe: []string{}})
	// The service no longer admits the ended lifecycle at all.
	if ms, err := e.Memberships(ctxT(t)); len(ms) != 0 || err == nil || !strings.Contains(err.Error(), "has ended") {
		t.Fatalf("memberships after the end: %+v %v; want the ended lifecycle refused", ms, err)
	}
	if r, err := e.Join(ctxT(t), "team"); err != nil || r.Durable {
		t.Fatalf("join of an ended lifecycle: %+v %v; want it live only", r, err)
	}
	// The next `up` provisions every identity ever minted: an ended one
	// stays ended.
	if err := broker.ProvisionIdentity(ctxT(t), h.op, id); err != nil {
		t.Fatal(err)
	}
	if _, err := h.js.Consumer(ctxT(t), wire.DlvStream(space), wire.DlvConsumer(id.Principal, id.UID)); !errors.Is(err, jetstream.ErrConsumerNotFound) {
		t.Fatalf("re-provisioning brought the ended backstop back: %v", err)
	}
}

// A lifecycle whose read ACL row was ended by someone else (a revocation
// this service never heard of) is stored nothing more.
func TestFanoutStoresNothingForAnEndedLifecycleItWasNotToldAbout(t *testing.T) {
	h := newHarness(t, false)
	path, id := h.mint(agent{name: "m", subscribe: []string{"team"}})
	first := h.connect(path, mesh.Options{})
	_ = first.Close()
	kv, err := h.js.KeyValue(ctxT(t), wire.ACLBucket(space))
	if err != nil {
		t.Fatal(err)
	}
	ent, err := kv.Get(ctxT(t), wire.ACLKey(id.Principal, id.UID))
	if err != nil {
		t.Fatal(err)
	}
	var row wire.ACLRow
	if err := json.Unmarshal(ent.Value(), &row); err != nil {
		t.Fatal(err)
	}
	row.EndedAt = time.Now().UTC()
	b, _ := json.Marshal(row)
	if _, err := kv.Put(ctxT(t), wire.ACLKey(id.Principal, id.UID), b); err != nil {
		t.Fatal(err)
	}
	p := h.poster("poster")
	post(t, p, "team", "for nobody")
	h.settled()
	if n := h.storedFor(wire.InboxStream(space), wire.InboxSubject(space, id.Principal, id.UID)); n != 0 {
		t.Fatalf("the fan-out stored %d copies for an ended lifecycle", n)
	}
}

// A transfer still waiting on its ack holds up the end of its own
// lifecycle and nothing else: another lifecycle ends and the fan-out
// stores copies meanwhile.
func TestEndLifecycleWaitsOnlyForItsOwnTransfers(t *testing.T) {
	h := newHarness(t, false)
	var ids []broker.Identity
	for _, name := range []string{"slow", "other", "stays"} {
		path, id := h.mint(agent{name: name, subscribe: []string{"team"}})
		_ = h.connect(path, mesh.Options{}).Close()
		ids = append(ids, id)
	}
	slow, other, stays := ids[0], ids[1], ids[2]
	release, ok := delivery.HoldTransfer(h.svc, slow.Principal, slow.UID)
	if !ok {
		t.Fatal("the gate refused a write for a live lifecycle")
	}
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	slowEnded := make(chan error, 1)
	go func() { slowEnded <- h.svc.EndLifecycle(ctxT(t), slow.Principal, slow.UID) }()

	otherEnded := make(chan error, 1)
	go func() { otherEnded <- h.svc.EndLifecycle(ctxT(t), other.Principal, other.UID) }()
	select {
	case err := <-otherEnded:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctxT(t).Done():
		t.Fatal("ending one lifecycle waited on another's transfer")
	}
	post(t, h.poster("poster"), "team", "while a transfer is out")
	dlv := wire.DlvSubject(space, stays.Principal, stays.UID)
	testutil.WaitFor(t, 10*time.Second, func() error {
		if n := h.storedFor(wire.DlvStream(space), dlv); n != 1 {
			return fmt.Errorf("%d stored copies for a live member while another's transfer is out; want 1", n)
		}
		return nil
	})
	select {
	case err := <-slowEnded:
		t.Fatalf("the lifecycle ended (%v) while a transfer for it was still out", err)
	default:
	}
	release()
	released = true
	select {
	case err := <-slowEnded:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctxT(t).Done():
		t.Fatal("the end did not follow its last transfer")
	}
	if n := h.storedFor(wire.DlvStream(space), wire.DlvSubject(space, slow.Principal, slow.UID)); n != 0 {
		t.Fatalf("%d stored copies kept for the ended lifecycle; want none", n)
	}
}
