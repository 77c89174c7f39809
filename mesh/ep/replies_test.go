package ep_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/cotal-go/cotal/mesh/ep"
)

// subInserts is how many subscriptions the broker has ever inserted.
func subInserts(t *testing.T, h *harness) uint64 {
	t.Helper()
	sz, err := h.b.Server().Subsz(&server.SubszOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sz.NumInserts
}

// TestCallsShareOneReplySubscription: calls, concurrent ones too, and
// several clients of one caller on one connection subscribe to their
// replies once, not once a call (each subscribe and unsubscribe rebuilt
// the broker's subscription table twice a call), and each still gets its
// own reply.
func TestCallsShareOneReplySubscription(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	nc := h.conn("calls")
	var clients []*ep.Client
	for range 3 {
		c, err := ep.NewClient(nc, ep.ClientOptions{Space: space, Caller: testCaller, SharedConn: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Call(ctxT(t), endpoint, "echo", map[string]string{"text": "warm"}); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	before := subInserts(t, h)
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n*len(clients))
	for _, c := range clients {
		for g := range 8 { // 24 in flight: under the per-caller limit of 32
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range n / 8 {
					text := fmt.Sprintf("g%d-%d", g, i)
					r, err := c.Call(ctxT(t), endpoint, "echo", map[string]string{"text": text})
					if err == nil && string(r.Data) != `{"instance":"inst-a","text":"`+text+`"}` {
						t.Errorf("call %s got another's reply: %s", text, r.Data)
					}
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := subInserts(t, h) - before; got >= n {
		t.Fatalf("%d calls made %d subscriptions, want them to share the one of their connection and caller", n*len(clients), got)
	}
}
