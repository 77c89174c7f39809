package delivery_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestListWaitingFollowsStoredTakenAndSettled: an identity's unread DMs
// count as stored, then as taken once its reader holds them, then not at
// all once acked; the oldest is when the first was stored.
func TestListWaitingFollowsStoredTakenAndSettled(t *testing.T) {
	h := newHarness(t, false)
	carolPath, carolID := h.mint(agent{name: "carol"})
	bob := h.poster("bob")
	before := time.Now().Add(-time.Second)
	for _, text := range []string{"one", "two"} {
		if _, err := bob.DM(ctxT(t), "local.carol", text); err != nil {
			t.Fatal(err)
		}
	}
	carol := func() delivery.Waiting {
		t.Helper()
		ws, err := delivery.ListWaiting(ctxT(t), h.js, space)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.Principal == (wire.Principal{Owner: "local", Actor: "carol"}) && w.LifecycleUID == carolID.UID {
				return w
			}
		}
		t.Fatalf("no inbox of carol's lifecycle %s in %+v", carolID.UID, ws)
		return delivery.Waiting{}
	}
	// The stream acked both DMs, but a consumer's pending count may trail
	// its stream by a moment: wait for it to say 2, never more.
	testutil.WaitFor(t, 5*time.Second, func() error {
		w := carol()
		if w.Stored > 2 || w.Taken != 0 {
			t.Fatalf("before carol reads: %+v", w)
		}
		if w.Stored != 2 || w.Oldest.Before(before) || w.Oldest.After(time.Now()) {
			return fmt.Errorf("before carol reads: %+v", w)
		}
		return nil
	})
	e := h.connect(carolPath, mesh.Options{OneShot: true})
	items, err := e.Collect(ctxT(t), 5*time.Second)
	if err != nil || len(items) != 2 {
		t.Fatalf("carol read %d items: %v", len(items), err)
	}
	if w := carol(); w.Stored != 0 || w.Taken != 2 {
		t.Fatalf("while carol holds them unacked: %+v", w)
	}
	for _, it := range items {
		if err := it.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		if w := carol(); w.Stored+w.Taken != 0 || !w.Oldest.IsZero() {
			return fmt.Errorf("after acks: %+v", w)
		}
		return nil
	})
}
