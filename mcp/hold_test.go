package mcp_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mcp"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// A DM the model has not read yet stays stored, un-acked, however long it
// waits: when the delivery service takes back an item held past its hold
// and hands it over again, the server keeps it under the new key instead
// of acking the copy as a duplicate (a crash before the read would have
// lost it), and the read then settles it.
func TestAnUnreadDMStaysStoredPastTheServicesHold(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the delivery service's 45 s hold on a taken item")
	}
	h := startMesh(t)
	aliceCreds := h.mint("alice", "", nil, nil)
	bob := h.peer(h.mint("bob", "", nil, nil))
	b, err := os.ReadFile(aliceCreds)
	if err != nil {
		t.Fatal(err)
	}
	info, err := wire.ParseCreds(b)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(h.op)
	if err != nil {
		t.Fatal(err)
	}
	dm, err := js.Consumer(ctxT(t), wire.DMStream(space), wire.DMConsumer(info.Principal, info.UID))
	if err != nil {
		t.Fatal(err)
	}
	consumer := func() *jetstream.ConsumerInfo {
		ci, err := dm.Info(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		return ci
	}

	dial := mcp.Options{Dial: func(ctx context.Context) (*mesh.Endpoint, error) {
		return mesh.Connect(ctx, mesh.Options{URL: h.url(), Creds: aliceCreds})
	}}
	first := serve(t, dial)
	first.waitOK("cotal_orientation", nil, "You are alice")
	if _, err := bob.DM(ctxT(t), "alice", "read me later"); err != nil {
		t.Fatal(err)
	}
	first.waitText("cotal_connection_status", nil, holding(`"inbox": 1`))

	// The service takes it back after its hold and hands it over again.
	testutil.WaitFor(t, 70*time.Second, func() error {
		if ci := consumer(); ci.Delivered.Consumer < 2 {
			return fmt.Errorf("not delivered again yet: %+v", ci.Delivered)
		}
		return nil
	})
	// Handed over again, it is held for alice once more and stays un-acked
	// in storage while nobody has read it.
	first.waitText("cotal_connection_status", nil, holding(`"inbox": 1`))
	if ci := consumer(); ci.NumAckPending != 1 || ci.AckFloor.Stream != 0 {
		t.Fatalf("the unread DM was settled in storage: ack pending %d, ack floor %+v", ci.NumAckPending, ci.AckFloor)
	}

	// Read now, it comes out once, and the read settles it in storage
	// under the key it was handed over again with.
	if got := first.ok("cotal_inbox", nil); got != "1 new peer message(s):\n[DM from bob] read me later" {
		t.Errorf("inbox: %q", got)
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		if ci := consumer(); ci.NumAckPending != 0 || ci.AckFloor.Stream != 1 {
			return fmt.Errorf("the read DM is not acked in storage: ack pending %d, ack floor %+v", ci.NumAckPending, ci.AckFloor)
		}
		return nil
	})
	if got := first.ok("cotal_inbox", nil); got != "Inbox empty, no new messages." {
		t.Errorf("second read: %q", got)
	}
}
