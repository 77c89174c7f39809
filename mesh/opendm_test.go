package mesh_test

import (
	"context"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestOpenDMInboxMadeAgainFromTheCut: an open mesh's DM consumers expire
// after 10 minutes unread, so a seat resumed after a longer night finds
// its inbox gone; made again from DMFrom (the one after its cut), it gets
// what was sent to it meanwhile, and nothing before the cut. A new
// lifecycle's inbox still starts from now.
func TestOpenDMInboxMadeAgainFromTheCut(t *testing.T) {
	h := newHarness(t, true)
	ctx := context.Background()
	uid := wire.NewLifecycleUID()
	first, err := mesh.Connect(ctxT(t), mesh.Options{URL: h.b.URL(), Space: space, Name: "carol", LifecycleUID: uid})
	if err != nil {
		t.Fatal(err)
	}
	sender := h.agentEndpoint(agent{name: "dave"}, mesh.Options{OneShot: true})
	if _, err := sender.DM(ctx, "local.carol", "before the cut"); err != nil {
		t.Fatal(err)
	}
	if it, err := first.Next(ctxT(t)); err != nil || it.Msg.Text() != "before the cut" {
		t.Fatalf("the first DM: %v %v", it, err)
	} else if err := it.Ack(); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := h.js.Stream(ctxT(t), wire.DMStream(space))
	if err != nil {
		t.Fatal(err)
	}
	cut := st.CachedInfo().State.LastSeq
	// What the inactivity threshold does after 10 minutes down.
	if err := h.js.DeleteConsumer(ctxT(t), wire.DMStream(space), wire.DMConsumer(wire.Principal{Owner: "local", Actor: "carol"}, uid)); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"while down 1", "while down 2"} {
		if _, err := sender.DM(ctx, "local.carol", text); err != nil {
			t.Fatal(err)
		}
	}

	back, err := mesh.Connect(ctxT(t), mesh.Options{URL: h.b.URL(), Space: space, Name: "carol", LifecycleUID: uid, DMFrom: cut + 1})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	for _, want := range []string{"while down 1", "while down 2"} {
		it, err := back.Next(ctxT(t))
		if err != nil || it.Msg.Text() != want {
			t.Fatalf("after the resume: %v %v, want %q", it, err, want)
		}
		_ = it.Ack()
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if it, err := back.Next(short); err == nil {
		t.Fatalf("a DM from before the cut came again: %q", it.Msg.Text())
	}

	// A new lifecycle's inbox starts from now.
	fresh, err := mesh.Connect(ctxT(t), mesh.Options{URL: h.b.URL(), Space: space, Name: "carol"})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	short2, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	if it, err := fresh.Next(short2); err == nil {
		t.Fatalf("a new lifecycle was handed %q, sent before it existed", it.Msg.Text())
	}
}
