package host_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestDeliveryWhileRevocationsApply: seats end all the time, and each end
// is an account update during which nats-server answers the account's
// JetStream API requests "no responders". DMs and durable posts sent
// through a storm of them are each acknowledged at the first try and
// reach their reader once each, with no ack refused.
func TestDeliveryWhileRevocationsApply(t *testing.T) {
	p := config.Paths{Space: "team", StoreDir: t.TempDir()}
	h, err := host.Start(context.Background(), host.Config{Paths: p, NoManager: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	b := h.Broker()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	aliceCreds, _ := testmesh.Mint(t, b, broker.Identity{Space: "team", Principal: wire.Principal{Owner: "local", Actor: "alice"},
		Subscribe: []string{}, AllowSubscribe: []string{}, AllowPublish: []string{"team"}})
	bobCreds, _ := testmesh.Mint(t, b, broker.Identity{Space: "team", Principal: wire.Principal{Owner: "local", Actor: "bob"},
		Subscribe: []string{"team"}, AllowSubscribe: []string{"team"}, AllowPublish: []string{}})
	connect := func(creds string) *mesh.Endpoint {
		e, err := mesh.Connect(ctx, mesh.Options{URL: b.URL(), Creds: creds})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	bob := connect(bobCreds)
	testutil.WaitFor(t, 30*time.Second, func() error {
		ms, err := bob.Memberships(ctx)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.Channel == "team" && m.Activated {
				return nil
			}
		}
		return fmt.Errorf("bob holds no active durable membership of team: %+v", ms)
	})
	alice := connect(aliceCreds)
	r := &reader{seen: map[string]int{}}
	rctx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	go r.run(rctx, bob)

	sys, err := b.ConnectSystem()
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var updates int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			kp, _ := nkeys.CreateUser()
			pk, _ := kp.PublicKey()
			rv := broker.Revocation{UserKey: pk, Principal: "local.gone", UID: wire.NewLifecycleUID()}
			if err := b.Authority().Revoke([]broker.Revocation{rv}, func(ajwt string) error {
				return broker.PushAccount(ctx, sys, ajwt)
			}); err != nil {
				t.Error(err)
				return
			}
			updates++
		}
	}()
	var ids []string
	for i := range 150 {
		dm := fmt.Sprintf("dm-%03d-%s", i, wire.NewLifecycleUID())
		if _, err := alice.DM(ctx, "bob", "dm "+dm, mesh.WithID(dm)); err != nil {
			t.Fatalf("DM %d during account updates: %v", i, err)
		}
		post := fmt.Sprintf("post-%03d-%s", i, wire.NewLifecycleUID())
		if _, err := alice.Send(ctx, "team", "post "+post, mesh.WithID(post)); err != nil {
			t.Fatalf("post %d during account updates: %v", i, err)
		}
		ids = append(ids, dm, post)
	}
	testutil.WaitFor(t, 2*time.Minute, func() error {
		missing, twice := r.missingOrTwice(ids)
		if len(twice) > 0 {
			t.Fatalf("delivered twice to bob: %v", twice)
		}
		if len(missing) > 0 {
			return fmt.Errorf("%d of %d messages not at bob yet, first %s", len(missing), len(ids), missing[0])
		}
		return nil
	})
	close(stop)
	wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ackErrs) > 0 {
		t.Fatalf("acks refused during account updates: %v", r.ackErrs)
	}
	t.Logf("%d messages through %d account updates", len(ids), updates)
}
