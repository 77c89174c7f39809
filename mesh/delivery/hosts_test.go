package delivery_test

import (
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/delivery"
)

// A caller whose host is slow to connect holds up no other caller: the
// service connects hosts outside its lock. Two first calls of the same
// lifecycle share one host.
func TestHostConnectHoldsNoOtherCaller(t *testing.T) {
	h := newHarness(t, false)
	pathA, idA := h.mint(agent{name: "slow"})
	pathB, _ := h.mint(agent{name: "quick"})
	slow := h.connect(pathA, mesh.Options{OneShot: true, Subscribe: []string{}})
	slow2 := h.connect(pathA, mesh.Options{OneShot: true, Subscribe: []string{}})
	quick := h.connect(pathB, mesh.Options{OneShot: true, Subscribe: []string{}})
	poster := h.poster("poster")
	for _, to := range []string{"local.slow", "local.quick"} {
		if _, err := poster.DM(ctxT(t), to, "hello"); err != nil {
			t.Fatal(err)
		}
	}
	h.settled()

	started, connects, release := delivery.HoldHostConnect(h.svc, idA.Principal)
	t.Cleanup(release)
	type result struct {
		items []*mesh.Item
		err   error
	}
	slowDone := make(chan result, 2)
	for _, e := range []*mesh.Endpoint{slow, slow2} {
		go func() {
			items, err := e.Collect(ctxT(t), time.Second)
			slowDone <- result{items, err}
		}()
	}
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the slow caller's host never began to connect")
	}

	quickDone := make(chan result, 1)
	go func() {
		items, err := quick.Collect(ctxT(t), time.Second)
		quickDone <- result{items, err}
	}()
	select {
	case r := <-quickDone:
		if r.err != nil || len(r.items) != 1 || r.items[0].Msg.Text() != "hello" {
			t.Fatalf("quick caller got %v %v; want the one DM", texts(r.items), r.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a caller waited for another caller's host to connect")
	}

	release()
	got := 0
	for range 2 {
		r := <-slowDone
		if r.err != nil {
			t.Fatalf("slow caller: %v", r.err)
		}
		got += len(r.items)
	}
	if got != 1 {
		t.Fatalf("the slow lifecycle's two calls got %d items; want the one DM once", got)
	}
	if n := connects(); n != 1 {
		t.Fatalf("the slow lifecycle's host connected %d times; want once", n)
	}
	if n := delivery.OpenHosts(h.svc); n != 2 {
		t.Fatalf("%d hosts open; want one per lifecycle (2)", n)
	}
}
