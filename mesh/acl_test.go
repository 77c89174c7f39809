package mesh_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// An observer's credential posts to no channel (broker.Identity.Permissions
// gives it no chat row): its endpoint refuses the post itself rather than
// reading its empty list as "anywhere" and leaving the refusal to the
// broker, and its state says what it may do.
func TestObserverEndpointPostsWhereItsCredentialPosts(t *testing.T) {
	h := newHarness(t, false)
	path, id := testmesh.Mint(t, h.b, broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: "watcher"}, Profile: wire.ProfileObserver})
	e := h.connect(path, mesh.Options{OneShot: true})
	if _, err := e.Send(ctxT(t), "team", "hello"); !errors.Is(err, mesh.ErrNotAllowed) {
		t.Errorf("an observer's post: %v, want ErrNotAllowed", err)
	}
	st := e.State()
	if st.AllowPublish == nil || len(st.AllowPublish) != 0 || !slices.Equal(st.AllowSubscribe, wire.Every()) {
		t.Errorf("an observer's state lists read %v post %v, want read [>] post []", st.AllowSubscribe, st.AllowPublish)
	}

	// The broker refuses the same post made past the endpoint.
	rc := &rawConn{}
	nc, err := nats.Connect(h.b.URL(), nats.UserCredentials(path), nats.CustomInboxPrefix(id.InboxPrefix()),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			rc.mu.Lock()
			rc.errs = append(rc.errs, err.Error())
			rc.mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	subj := wire.Root(space) + ".chat.local.watcher.team"
	if err := nc.Publish(subj, []byte("x")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error { _ = nc.Flush(); return rc.violation(subj) })
}

// An endpoint acting for an agent reads what the same lists grant at the
// broker: lists left out read and post nothing, and a read list that
// follows the subscribe list reads those channels only.
func TestActingEndpointListsMeanWhatTheCredentialsDo(t *testing.T) {
	h := newHarness(t, false)
	nc, _ := h.b.Internal()
	act := func(id *mesh.Identity) *mesh.Endpoint {
		bid := broker.Identity{Space: space, Principal: id.Principal, Subscribe: id.Subscribe, AllowSubscribe: id.AllowSubscribe, AllowPublish: id.AllowPublish}
		if err := bid.Normalize(); err != nil {
			t.Fatal(err)
		}
		if err := broker.ProvisionIdentity(ctxT(t), nc, bid); err != nil {
			t.Fatal(err)
		}
		id.UID = bid.UID
		e, err := mesh.Connect(ctxT(t), mesh.Options{Conn: nc, Space: space, Act: id, OneShot: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	none := act(&mesh.Identity{Principal: wire.Principal{Owner: "local", Actor: "nobody"}, Subscribe: []string{}})
	if _, err := none.Join(ctxT(t), "team"); !errors.Is(err, mesh.ErrNotInReadACL) {
		t.Errorf("joining with no read list: %v, want ErrNotInReadACL", err)
	}
	if _, err := none.Send(ctxT(t), "team", "x"); !errors.Is(err, mesh.ErrNotAllowed) {
		t.Errorf("posting with no post list: %v, want ErrNotAllowed", err)
	}
	same := act(&mesh.Identity{Principal: wire.Principal{Owner: "local", Actor: "alice"}, Subscribe: []string{},
		AllowSubscribe: wire.SameAsSubscribe([]string{"team"})})
	if _, err := same.Join(ctxT(t), "team"); err != nil {
		t.Errorf("joining #team within the read list: %v", err)
	}
	if _, err := same.Join(ctxT(t), "ops"); !errors.Is(err, mesh.ErrNotInReadACL) {
		t.Errorf("joining #ops outside the read list: %v, want ErrNotInReadACL", err)
	}
}
