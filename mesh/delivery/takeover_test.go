package delivery_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

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
