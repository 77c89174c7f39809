package delivery_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/wire"
)

func TestFailedCatchUpDoesNotActivateTheHold(t *testing.T) {
	h := newHarness(t, false)
	path, id := h.mint(agent{name: "m", subscribe: []string{"team"}})
	h.svc.Close()
	h.putMembership(id, "team", 0) // an activation a crash interrupted
	p := h.poster("poster")
	post(t, p, "team", "in the window")
	// Nothing more can be stored: the INBOX stream is full and refuses new
	// copies.
	st, err := h.js.Stream(ctxT(t), wire.InboxStream(space))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.js.Publish(ctxT(t), wire.Root(space)+".dinbox.filler", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	cfg.MaxMsgs, cfg.Discard = 1, jetstream.DiscardNew
	if _, err := h.js.UpdateStream(ctxT(t), cfg); err != nil {
		t.Fatal(err)
	}
	h.startService()
	e := h.connect(path, mesh.Options{OneShot: true, Subscribe: []string{}})
	r, err := e.Join(ctxT(t), "team")
	if err != nil {
		t.Fatal(err)
	}
	if r.Durable || !strings.Contains(r.Reason, "catch-up failed") {
		t.Fatalf("join with a catch-up that could not store: %+v; want live only, saying why", r)
	}
	ms, err := e.Memberships(ctxT(t))
	if err != nil || len(ms) != 0 {
		t.Fatalf("memberships: %+v %v; want the partial hold ended", ms, err)
	}
}

func TestActivationOverAnEvictedWindowIsLiveOnly(t *testing.T) {
	h := newHarness(t, false)
	path, id := h.mint(agent{name: "m", subscribe: []string{"cap"}})
	h.svc.Close()
	h.putMembership(id, "cap", 0)
	ctx := ctxT(t)
	subj := wire.Root(space) + ".chat.local.poster.cap"
	var posts []*nats.Msg
	for i := range 1005 {
		body := fmt.Sprintf(`{"id":"e%d","ts":1,"space":%q,"from":{"id":"local.poster","name":"poster"},"channel":"cap","parts":[{"kind":"text","text":"%d"}]}`, i, space, i)
		posts = append(posts, &nats.Msg{Subject: subj, Data: []byte(body)})
	}
	testmesh.Store(t, h.op, posts...)
	h.startService()
	e := h.connect(path, mesh.Options{OneShot: true, Subscribe: []string{}})
	r, err := e.Join(ctx, "cap")
	if err != nil {
		t.Fatal(err)
	}
	if r.Durable || !strings.Contains(r.Reason, "partially evicted by retention") {
		t.Fatalf("join over a window retention cut: %+v; want live only, saying why", r)
	}
}

func TestDurableJoinWaitsThirtySecondsForTheService(t *testing.T) {
	h := newHarness(t, false)
	path, _ := h.mint(agent{name: "m", allowSub: []string{"team"}})
	e := h.connect(path, mesh.Options{OneShot: true, Subscribe: []string{}})
	release := delivery.HoldControl(h.svc)
	time.AfterFunc(6*time.Second, release)
	r, err := e.Join(ctxT(t), "team")
	if err != nil || !r.Durable {
		t.Fatalf("join answered after 6s: %+v %v; want it held durably", r, err)
	}
}
