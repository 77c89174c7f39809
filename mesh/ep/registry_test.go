package ep_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/ep"
)

func (h *harness) status(iid string) (ep.SvcStatus, uint64) {
	h.t.Helper()
	key, _ := ep.SvcKey(endpoint, iid, "status")
	e, err := h.kv.Get(ctxT(h.t), key)
	if err != nil {
		h.t.Fatalf("%s: %v", key, err)
	}
	var s ep.SvcStatus
	_ = json.Unmarshal(e.Value(), &s)
	return s, e.Revision()
}

// TestRecordsBeforeServing: when Start returns, spec and status are written, status ready at the new epoch; every start CAS-increments it (checklist 21, 23).
func TestRecordsBeforeServing(t *testing.T) {
	h := newHarness(t)
	for want := uint64(1); want <= 3; want++ {
		a := h.start("inst-a")
		st, _ := h.status("inst-a")
		if st.Epoch != want || st.State != ep.StateReady || a.srv.Epoch() != want || st.ObservedSpecRevision != a.srv.RegistrationRevision() {
			t.Fatalf("start %d: status %+v, server epoch %d", want, st, a.srv.Epoch())
		}
		reg, err := ep.ReadRegistration(ctxT(t), h.kv, endpoint, "inst-a")
		if err != nil || reg.SpecRevision != a.srv.RegistrationRevision() || len(reg.Spec.ClusterDigests) != 1 {
			t.Fatalf("spec %+v %v", reg, err)
		}
		if err := a.srv.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOnlyCurrentEpochServes: a second start of the same instance takes the next epoch; the first stops publishing at once, and closing it touches none of the successor's records (checklist 23, 31).
func TestOnlyCurrentEpochServes(t *testing.T) {
	h := newHarness(t)
	first := h.start("inst-a")
	second := h.start("inst-a")
	waitFor(t, func() error {
		if first.srv.Serving() {
			return errNot("first incarnation fenced")
		}
		return nil
	})
	c := h.client()
	for range 5 {
		res, err := c.Call(ctxT(t), endpoint, "echo", map[string]string{"text": "x"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Responder.Epoch != second.srv.Epoch() {
			t.Fatalf("answered at epoch %d, current is %d", res.Responder.Epoch, second.srv.Epoch())
		}
	}
	_, rev := h.status("inst-a")
	if err := first.srv.Close(); err != nil {
		t.Fatal(err)
	}
	st, rev2 := h.status("inst-a")
	if rev2 != rev || st.State != ep.StateReady {
		t.Fatalf("closing the fenced incarnation moved the successor's status: %+v", st)
	}
}

// TestCleanStopDeregisters: Close deletes the spec it wrote; a crash leaves the registration in place (checklist 31).
func TestCleanStopDeregisters(t *testing.T) {
	h := newHarness(t)
	a := h.start("inst-a")
	b := h.start("inst-b")
	if err := a.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ep.ReadRegistration(ctxT(t), h.kv, endpoint, "inst-a"); !errors.Is(err, ep.ErrNotRegistered) {
		t.Fatalf("after Close: %v", err)
	}
	st, _ := h.status("inst-a")
	if st.State != ep.StateExited || st.Epoch != 1 {
		t.Fatalf("status after Close %+v", st)
	}
	b.kill()
	if _, err := ep.ReadRegistration(ctxT(t), h.kv, endpoint, "inst-b"); err != nil {
		t.Fatalf("crashed instance lost its registration: %v", err)
	}
}

// TestCloseRespectsRecordedRevision: a spec rewritten by someone else is not deleted by Close (checklist 31).
func TestCloseRespectsRecordedRevision(t *testing.T) {
	h := newHarness(t)
	a := h.start("inst-a")
	key, _ := ep.SvcKey(endpoint, "inst-a", "spec")
	e, _ := h.kv.Get(ctxT(t), key)
	if _, err := h.kv.Put(ctxT(t), key, e.Value()); err != nil {
		t.Fatal(err)
	}
	if err := a.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.kv.Get(ctxT(t), key); err != nil {
		t.Fatalf("a spec this start did not write was deleted: %v", err)
	}
	_ = jetstream.ErrKeyNotFound
}
