package delivery_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// startOn starts a delivery service named instance on a connection of
// its own, which the caller may cut as a dying process would.
func (h *harness) startOn(instance string) (*delivery.Service, *nats.Conn) {
	h.t.Helper()
	nc, err := h.b.Connect(instance)
	if err != nil {
		h.t.Fatal(err)
	}
	svc, err := delivery.Start(testmesh.Ctx(h.t), nc, delivery.Options{Space: space, Instance: instance,
		Logf: func(f string, a ...any) { h.t.Logf(instance+": "+f, a...) }})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { svc.Close(); nc.Close() })
	return svc, nc
}

// holder is the instance the lease names now.
func (h *harness) holder() string {
	h.t.Helper()
	l, err := delivery.ReadLease(ctxT(h.t), h.js, space)
	if err != nil {
		return ""
	}
	return l.Holder
}

// probedPast waits until svc has probed n more times than before.
func probedPast(t *testing.T, svc *delivery.Service, n uint64) {
	t.Helper()
	from := delivery.Probes(svc)
	testutil.WaitFor(t, 30*time.Second, func() error {
		if got := delivery.Probes(svc) - from; got < n {
			return fmt.Errorf("the standby probed %d times, want %d", got, n)
		}
		return nil
	})
}

// A standby never takes a live holder's lease however long it probes;
// when the holder's connection dies without giving the lease back (a
// process killed), the standby proves it gone by no-responders on its
// endpoint and serves long before the lease's 30 s TTL, and a durable post
// made after the death reaches a member once.
func TestStandbyTakesADeadHoldersLeaseByNoResponders(t *testing.T) {
	h := newHarness(t, true)
	first, firstConn := h.startOn("first/1")
	testutil.WaitFor(t, 10*time.Second, func() error {
		if !first.Ready() {
			return errors.New("the first service does not serve yet")
		}
		return nil
	})
	back, gone := durableMember(t, h, "m", "team")
	gone()
	second, _ := h.startOn("second/2")
	probedPast(t, second, delivery.DeathProbes+2)
	if second.Ready() || h.holder() != "first/1" || !first.Ready() {
		t.Fatalf("a standby took a live holder's lease: second ready %v, holder %q", second.Ready(), h.holder())
	}

	killed := time.Now()
	firstConn.Close()
	testutil.WaitFor(t, 25*time.Second, func() error {
		if !second.Ready() {
			return fmt.Errorf("the standby does not serve yet (holder %q)", h.holder())
		}
		return nil
	})
	t.Logf("the standby served %s after the holder's connection died (lease TTL %s)", time.Since(killed).Round(100*time.Millisecond), 3*delivery.LeaseRenew)
	if got := h.holder(); got != "second/2" {
		t.Fatalf("the lease names %q after the takeover", got)
	}

	post(t, h.poster("poster"), "team", "after the death")
	if got := texts(collectAtLeast(t, back(), 1, 20*time.Second)); !equal(got, []string{"after the death"}) {
		t.Fatalf("after the takeover the member got %v", got)
	}
	h.settled()
	if got := texts(collect(t, back(), 0)); len(got) != 0 {
		t.Fatalf("the post came again: %v", got)
	}
}

// An agent can neither fake the broker's no-responders answer to a
// standby's probe nor write the lease: both are permission violations,
// and the standby goes on leaving the live holder's lease alone.
func TestAgentCannotFakeAHoldersDeathOrTakeTheLease(t *testing.T) {
	h := newHarness(t, true)
	first, _ := h.startOn("first/1")
	testutil.WaitFor(t, 10*time.Second, func() error {
		if !first.Ready() {
			return errors.New("the first service does not serve yet")
		}
		return nil
	})
	second, _ := h.startOn("second/2")
	creds, id := h.mint(agent{name: "mallory", subscribe: []string{"team"}})
	var mu sync.Mutex
	var errs []string
	nc, err := nats.Connect(h.b.URL(), nats.UserCredentials(creds), nats.CustomInboxPrefix(id.InboxPrefix()), nats.MaxReconnects(0),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			mu.Lock()
			errs = append(errs, err.Error())
			mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	refused := func(subject string) {
		t.Helper()
		testutil.WaitFor(t, 5*time.Second, func() error {
			_ = nc.Flush()
			mu.Lock()
			defer mu.Unlock()
			for _, e := range errs {
				if strings.Contains(strings.ToLower(e), "permissions violation") && strings.Contains(e, subject) {
					return nil
				}
			}
			return fmt.Errorf("no permissions violation for %q (so far %v)", subject, errs)
		})
	}
	// The standby's sentinel for any nonce: the caller triple is its
	// service identity, whose uid an agent could learn from a reply.
	fake := proto.NoRespondersSubject(space, proto.Caller{Owner: "local", Actor: delivery.ServiceActor, UID: wire.NewLifecycleUID()}, proto.NewNonce())
	noResponders := nats.Header{}
	noResponders.Set("Status", "503")
	for _, m := range []*nats.Msg{
		{Subject: fake, Header: noResponders},
		{Subject: "$KV." + wire.DeliveryBucket(space) + "." + delivery.LeaseKey, Data: []byte(`{"holder":"mallory/1","incarnation":"` + wire.NewLifecycleUID() + `","ready":true}`)},
		{Subject: "$JS.API.STREAM.MSG.DELETE.KV_" + wire.DeliveryBucket(space), Data: []byte(`{"seq":1}`)},
	} {
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
		refused(m.Subject)
	}
	// Holding the holder's rail would only keep a standby waiting for
	// the TTL; the agent may not subscribe to it either.
	rail := root() + ".ep.inst." + wire.DeliveryEndpoint + ".>"
	if _, err := nc.SubscribeSync(rail); err != nil {
		t.Fatal(err)
	}
	refused(rail)
	probedPast(t, second, delivery.DeathProbes+2)
	if second.Ready() || h.holder() != "first/1" || !first.Ready() {
		t.Fatalf("after the agent's attempts: second ready %v, holder %q", second.Ready(), h.holder())
	}
}

func root() string { return wire.Root(space) }
