package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Provisioning an identity again (every `up` does, for every identity
// minted) leaves its durables as they are: a DM that waits for it is
// still pending after, and the backstop and role queue are not reset.
func TestProvisionAgainKeepsWhatWaits(t *testing.T) {
	b := startBroker(t, false)
	id := alice()
	id.Space, id.Role = space, "reviewer"
	creds, err := b.Authority().Mint(id)
	if err != nil {
		t.Fatal(err)
	}
	nc, _ := b.Internal()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := broker.ProvisionIdentity(ctx, nc, creds.Identity); err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	p := creds.Identity.Principal
	from := wire.Principal{Owner: "local", Actor: "bob"}
	c, err := js.Consumer(ctx, wire.DMStream(space), wire.DMConsumer(p, creds.Identity.UID))
	if err != nil {
		t.Fatal(err)
	}
	pending := func() uint64 {
		t.Helper()
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.NumPending
	}
	// The DM stream sends no PubAck: the DM is there once the durable counts it.
	if err := nc.Publish(wire.DMSubject(space, p, from), []byte(`{"text":"waits"}`)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		if n := pending(); n != 1 {
			return fmt.Errorf("alice's durable holds %d pending, want 1", n)
		}
		return nil
	})
	if err := broker.ProvisionIdentity(ctx, nc, creds.Identity); err != nil {
		t.Fatalf("provisioning again: %v", err)
	}
	if n := pending(); n != 1 {
		t.Fatalf("the DM durable holds %d pending after provisioning again, want the 1 DM sent before", n)
	}
	for _, d := range []struct{ stream, name string }{
		{wire.DlvStream(space), wire.DlvConsumer(p, creds.Identity.UID)},
		{wire.TaskStream(space), wire.SvcConsumer(id.Role)},
	} {
		if _, err := js.Consumer(ctx, d.stream, d.name); err != nil {
			t.Errorf("durable %s on %s: %v", d.name, d.stream, err)
		}
	}
	kv, err := js.KeyValue(ctx, wire.RecordsBucket(space))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, wire.IdentityKey(p)); err != nil {
		t.Fatalf("the identity's registry row: %v", err)
	}
}
