package delivery_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/wire"
)

// The mesh process holds the store lock, so a lease it finds is a dead
// predecessor's: it serves at once, and what the predecessor was handed
// and never acked is handed out again now, not after the ack wait.
func TestTakeOverServesAtOnceAndRedoesWhatWasInFlight(t *testing.T) {
	h := newHarness(t, false)
	back, gone := durableMember(t, h, "m", "team")
	gone()
	h.svc.Close()
	leases, err := h.js.KeyValue(ctxT(t), wire.DeliveryBucket(space))
	if err != nil {
		t.Fatal(err)
	}
	dead, _ := json.Marshal(map[string]any{"holder": "elsewhere/1", "incarnation": "x", "since": time.Now().UTC(), "ready": true})
	if _, err := leases.Put(ctxT(t), delivery.LeaseKey, dead); err != nil {
		t.Fatal(err)
	}
	post(t, h.poster("poster"), "team", "in flight")
	// The dead process had fetched the post and died before acking it.
	fan, err := h.js.Consumer(ctxT(t), wire.ChatStream(space), delivery.FanoutConsumer)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := fan.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	fetched := 0
	for range batch.Messages() {
		fetched++
	}
	if fetched != 1 {
		t.Fatalf("the dead process fetched %d posts (%v); want 1", fetched, batch.Error())
	}
	start := time.Now()
	h.startServiceWith(delivery.Options{TakeOver: true})
	if got := texts(collect(t, back(), 2*time.Second)); !equal(got, []string{"in flight"}) {
		t.Fatalf("after the takeover the member got %v", got)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the post in flight at the crash took %s to arrive", took)
	}
}

// A value on the lease key that no delivery service wrote (garbage, or a
// JetStream answer aimed at the key) never stops delivery: the holder takes
// the key back within its renew tick and says so, and a service starting
// over such a value serves at once instead of waiting out the lease TTL.
func TestForeignLeaseValueNeverStopsDelivery(t *testing.T) {
	h := newHarness(t, true)
	var mu sync.Mutex
	var logged []string
	logf := func(f string, a ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(f, a...))
		mu.Unlock()
	}
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
	leases, err := h.js.KeyValue(ctxT(t), wire.DeliveryBucket(space))
	if err != nil {
		t.Fatal(err)
	}
	foreign := []byte(`{"stream":"CHAT_dlv","seq":7}`)
	if _, err := leases.Put(ctxT(t), delivery.LeaseKey, foreign); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	h.startServiceWith(delivery.Options{Logf: logf})
	if took := time.Since(start); took >= broker.DeliveryLeaseTTL/2 {
		t.Fatalf("a service starting over a foreign lease value took %s to serve", took)
	}
	testutil.WaitFor(t, 5*time.Second, func() error { return saw("no service's lease; it took the lease") })

	back, gone := durableMember(t, h, "m", "team")
	gone()
	p := h.poster("poster")
	for i := range 3 {
		if _, err := leases.Put(ctxT(t), delivery.LeaseKey, foreign); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, delivery.LeaseRenew, func() error {
			ent, err := leases.Get(ctxT(t), delivery.LeaseKey)
			if err != nil {
				return err
			}
			if string(ent.Value()) == string(foreign) {
				return fmt.Errorf("round %d: the lease key still holds the foreign value", i)
			}
			return nil
		})
		post(t, p, "team", fmt.Sprintf("post %d", i))
	}
	if got := texts(collectAtLeast(t, back(), 3, 5*time.Second)); !equal(got, []string{"post 0", "post 1", "post 2"}) {
		t.Fatalf("the member got %v", got)
	}
	if !h.svc.Ready() || saw("lost its lease") == nil {
		t.Fatalf("the service stopped serving: %q", logged)
	}
}
