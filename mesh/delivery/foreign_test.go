package delivery_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestAForeignRowHoldsOnlyItsOwnMember: a value nobody entitled wrote on a
// member's read ACL (an answer aimed at the key) is no row: that member's
// copies wait, loudly, instead of being dropped as revoked, the other
// members get theirs, and once the row reads again the waiting copy
// arrives. A foreign key in the members bucket is skipped at start.
func TestAForeignRowHoldsOnlyItsOwnMember(t *testing.T) {
	h := newHarness(t, true)
	var mu sync.Mutex
	var logged []string
	saw := func(part string) error {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range logged {
			if strings.Contains(l, part) {
				return nil
			}
		}
		return fmt.Errorf("no log line with %q in %q", part, logged)
	}
	members, err := h.js.KeyValue(ctxT(t), wire.MembersBucket(space))
	if err != nil {
		t.Fatal(err)
	}
	pubAck := []byte(`{"stream":"CHAT_dlv","seq":3}`)
	if _, err := members.Put(ctxT(t), "m.local.ghost.x.team", pubAck); err != nil {
		t.Fatal(err)
	}
	h.startServiceWith(delivery.Options{Logf: func(f string, a ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(f, a...))
		mu.Unlock()
	}})
	testutil.WaitFor(t, 5*time.Second, func() error { return saw("hold no membership it wrote") })

	bobBack, bobGone := durableMember(t, h, "bob", "team")
	bobGone()
	carolBack, carolGone := durableMember(t, h, "carol", "team")
	carolGone()
	bob := bobBack()
	acl, err := h.js.KeyValue(ctxT(t), wire.ACLBucket(space))
	if err != nil {
		t.Fatal(err)
	}
	key := wire.ACLKey(bob.Me(), bob.LifecycleUID())
	good, err := acl.Get(ctxT(t), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acl.Put(ctxT(t), key, pubAck); err != nil {
		t.Fatal(err)
	}
	post(t, h.poster("poster"), "team", "while bob's row is foreign")
	if got := texts(collect(t, carolBack(), 5*time.Second)); !equal(got, []string{"while bob's row is foreign"}) {
		t.Fatalf("carol got %q", got)
	}
	testutil.WaitFor(t, 10*time.Second, func() error { return saw("local.bob." + bob.LifecycleUID()) })
	// Bob's own reads say why they cannot be served; nothing is handed.
	if got, err := bob.Collect(ctxT(t), 0); err == nil && len(got) != 0 {
		t.Fatalf("bob got %q while his row was foreign", texts(got))
	}
	if _, err := acl.Put(ctxT(t), key, good.Value()); err != nil {
		t.Fatal(err)
	}
	if got := texts(collect(t, bob, 10*time.Second)); !equal(got, []string{"while bob's row is foreign"}) {
		t.Fatalf("once his row read again bob got %q", got)
	}
}
