package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestClearStreamsStreamGoneBeforePurge: a stream that disappears between
// the count and the purge (another process deleted it, the mesh went down)
// is an error naming it. It was looked up a second time with the error
// dropped, and the purge ran on a nil stream and panicked.
func TestClearStreamsStreamGoneBeforePurge(t *testing.T) {
	const space = "hist"
	_, op := testmesh.Start(t, space, false)
	js, err := jetstream.New(op)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	chat, dm := wire.ChatStream(space), wire.DMStream(space)
	testHookBeforePurge = func() {
		if err := js.DeleteStream(ctx, dm); err != nil {
			t.Errorf("deleting %s: %v", dm, err)
		}
	}
	t.Cleanup(func() { testHookBeforePurge = func() {} })

	var counts []streamCount
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("clearing with %s gone panicked: %v", dm, r)
			}
		}()
		counts, err = clearStreams(ctx, js, []string{chat, dm}, true)
	}()
	if err == nil || !strings.Contains(err.Error(), dm) {
		t.Fatalf("clearing with %s gone: err %v, want one naming it", dm, err)
	}
	if want := "0 from " + chat; len(counts) != 2 || counts[0].String() != want {
		t.Fatalf("counts %q, want %q first", counts, want)
	}
}
