package broker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestClearHistoryStreamGoneBeforePurge: a stream that disappears between
// the count and the purge (another process deleted it, the mesh went down)
// is an error naming it. It was looked up a second time with the error
// dropped, and the purge ran on a nil stream and panicked.
func TestClearHistoryStreamGoneBeforePurge(t *testing.T) {
	const space = "hist"
	_, op := testmesh.Start(t, space, false)
	js, err := jetstream.New(op)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	chat, dm := wire.ChatStream(space), wire.DMStream(space)
	broker.SetTestHookBeforePurge(func() {
		if err := js.DeleteStream(ctx, dm); err != nil {
			t.Errorf("deleting %s: %v", dm, err)
		}
	})
	t.Cleanup(func() { broker.SetTestHookBeforePurge(func() {}) })

	var counts []broker.StreamCount
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("clearing with %s gone panicked: %v", dm, r)
			}
		}()
		counts, err = broker.ClearHistory(ctx, op, space, true, true)
	}()
	if err == nil || !strings.Contains(err.Error(), dm) {
		t.Fatalf("clearing with %s gone: err %v, want one naming it", dm, err)
	}
	if want := (broker.StreamCount{Stream: chat}); len(counts) != 2 || counts[0] != want {
		t.Fatalf("counts %+v, want %+v first", counts, want)
	}
}

// TestChatRetentionDuplicateWindowFollowsTheAge: an age limit shorter
// than the duplicate window shortens the window with it (JetStream refuses
// a window longer than the age), and dropping the age limit gives the
// window its two minutes back.
func TestChatRetentionDuplicateWindowFollowsTheAge(t *testing.T) {
	const space = "ret"
	_, op := testmesh.Start(t, space, false)
	js, _ := jetstream.New(op)
	dup := func() time.Duration {
		t.Helper()
		st, err := js.Stream(testmesh.Ctx(t), wire.ChatStream(space))
		if err != nil {
			t.Fatal(err)
		}
		return st.CachedInfo().Config.Duplicates
	}
	age := 30 * time.Second
	r, err := broker.SetChatRetention(testmesh.Ctx(t), op, space, &age, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.MaxAge != age || r.MaxPerSender != 1000 || dup() != age {
		t.Fatalf("after a 30 s age: %+v, duplicate window %s; want the age, 1000 per sender and a 30 s window", r, dup())
	}
	none := time.Duration(0)
	if r, err = broker.SetChatRetention(testmesh.Ctx(t), op, space, &none, 5); err != nil {
		t.Fatal(err)
	}
	if r.MaxAge != 0 || r.MaxPerSender != 5 || dup() != 2*time.Minute {
		t.Fatalf("after no age and 5 per sender: %+v, duplicate window %s; want 2m", r, dup())
	}
	tiny := time.Millisecond
	if _, err := broker.SetChatRetention(testmesh.Ctx(t), op, space, &tiny, 0); err == nil {
		t.Fatal("an age limit under a second was taken")
	}
}
