package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestOneIdentityCannotTakeEveryDeliverySlot: 4 200 long-poll takes from
// one identity minted with no rights (more than the endpoint's 4 096 slots)
// hold at most MaxCallsPerCaller of them; the rest are refused
// resource-exhausted at once, and another agent's calls are served as
// before. Before, they filled every slot and starved the space.
func TestOneIdentityCannotTakeEveryDeliverySlot(t *testing.T) {
	if testing.Short() {
		t.Skip("4 200 calls at once: more than the race detector's short run takes on a small machine")
	}
	h := newHarness(t, false)
	_, mallory := h.mint(agent{name: "mallory", allowPub: []string{}})
	nc, err := h.b.Connect("mallory's calls")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c, err := ep.NewClient(nc, ep.ClientOptions{Space: space, Caller: proto.Caller{Owner: mallory.Principal.Owner, Actor: mallory.Principal.Actor, UID: mallory.UID}, SharedConn: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const takes = 4200
	var refused, other atomic.Int64
	var wg sync.WaitGroup
	for range takes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Call(ctx, wire.DeliveryEndpoint, wire.DeliveryTake, mesh.TakeArgs{WaitMs: 25000}, ep.Self(), ep.Timeout(30*time.Second))
			var e *proto.Error
			switch {
			case errors.As(err, &e) && e.Code == proto.CodeResourceExhausted:
				refused.Add(1)
			case err != nil && ctx.Err() == nil:
				other.Add(1)
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	want := int64(takes - delivery.MaxCallsPerCaller)
	testutil.WaitFor(t, 60*time.Second, func() error {
		if n := refused.Load(); n < want {
			return fmt.Errorf("%d of %d takes refused resource-exhausted (other errors: %d), want %d", n, takes, other.Load(), want)
		}
		return nil
	})
	// Another agent is served while mallory holds her share.
	path, _ := h.mint(agent{name: "alice", subscribe: []string{"team"}})
	e := h.connect(path, mesh.Options{OneShot: true})
	start := time.Now()
	if _, _, err := e.History(ctxT(t), "team", 10); err != nil {
		t.Fatalf("alice's history while mallory floods: %v", err)
	}
	if _, err := e.Collect(ctxT(t), 0); err != nil {
		t.Fatalf("alice's take while mallory floods: %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("alice waited %s for two calls", took)
	}
}
