package attach_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/attach"
)

// clock is a settable Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newRegistry(t *testing.T, opts attach.RegistryOptions) *attach.Registry {
	t.Helper()
	if opts.Space == "" {
		opts.Space = space
	}
	if opts.Endpoint == "" {
		opts.Endpoint = "manager"
	}
	if opts.Serving.InstanceID == "" {
		opts.Serving = attach.Serving{InstanceID: ep.NewInstanceID(), Epoch: 1}
	}
	r, err := attach.NewRegistry(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(attach.ReasonManagerRestart) })
	return r
}

func wantCode(t *testing.T, err error, code, text string) {
	t.Helper()
	e := proto.AsError(err)
	if e == nil || e.Code != code || !strings.Contains(e.Message, text) {
		t.Fatalf("got %v; want %s containing %q", err, code, text)
	}
}

func offer(t *testing.T, r *attach.Registry, seat string, h attach.Holder) (attach.Grant, []byte) {
	t.Helper()
	g, err := r.Offer(attach.Target{Name: seat}, h)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := g.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return g, raw
}

func TestRedeemOnceByItsHolderOnly(t *testing.T) {
	r := newRegistry(t, attach.RegistryOptions{})
	alice, mallory := testHolder("alice"), testHolder("mallory")
	g, raw := offer(t, r, "shell", alice)

	_, _, err := r.Redeem(raw, mallory)
	wantCode(t, err, proto.CodePermissionDenied, "issued to local.alice")
	// Same principal, another lifecycle: not the holder either.
	_, _, err = r.Redeem(raw, attach.Holder{ID: alice.ID, LifecycleUID: mallory.LifecycleUID})
	wantCode(t, err, proto.CodePermissionDenied, "issued to")
	// Another process epoch of the holder: its live authority died.
	_, _, err = r.Redeem(raw, attach.Holder{ID: alice.ID, LifecycleUID: alice.LifecycleUID, ProcessEpoch: 1})
	wantCode(t, err, proto.CodePermissionDenied, "issued to")

	got, target, err := r.Redeem(raw, alice)
	if err != nil {
		t.Fatalf("Redeem by the holder: %v", err)
	}
	if got.SessionID != g.SessionID || target.Name != "shell" {
		t.Fatalf("Redeem = %s for %+v", got.SessionID, target)
	}
	_, _, err = r.Redeem(raw, alice)
	wantCode(t, err, proto.CodeConflict, "already redeemed")
	_, _, err = r.Redeem(raw, mallory)
	wantCode(t, err, proto.CodePermissionDenied, "issued to")
}

func TestRedeemRefusesOtherEpochAndUnknown(t *testing.T) {
	signer := attach.NewSigner()
	iid := ep.NewInstanceID()
	old := newRegistry(t, attach.RegistryOptions{Signer: signer, Serving: attach.Serving{InstanceID: iid, Epoch: 4}})
	alice := testHolder("alice")
	_, raw := offer(t, old, "shell", alice)

	// The same instance restarted at the next epoch, with a fresh key.
	restarted := newRegistry(t, attach.RegistryOptions{Serving: attach.Serving{InstanceID: iid, Epoch: 5}})
	_, _, err := restarted.Redeem(raw, alice)
	wantCode(t, err, proto.CodeExpired, "manager restarted; re-attach")

	// Even with the same key, an epoch it does not serve.
	sameKey := newRegistry(t, attach.RegistryOptions{Signer: signer, Serving: attach.Serving{InstanceID: iid, Epoch: 5}})
	_, _, err = sameKey.Redeem(raw, alice)
	wantCode(t, err, proto.CodeExpired, "epoch 4")

	// Same key and epoch, but never offered by this registry.
	twin := newRegistry(t, attach.RegistryOptions{Signer: signer, Serving: attach.Serving{InstanceID: iid, Epoch: 4}})
	_, _, err = twin.Redeem(raw, alice)
	wantCode(t, err, proto.CodeNotFound, "ask for a new one")
}

func TestRedeemAfterExpiryRefused(t *testing.T) {
	c := &clock{now: time.Now()}
	r := newRegistry(t, attach.RegistryOptions{Now: c.Now, TTL: time.Minute, RedeemWithin: time.Hour})
	alice := testHolder("alice")
	_, raw := offer(t, r, "shell", alice)
	c.Add(time.Minute)
	_, _, err := r.Redeem(raw, alice)
	wantCode(t, err, proto.CodeExpired, "expired at")
}

func TestOfferCeiling(t *testing.T) {
	c := &clock{now: time.Now()}
	r := newRegistry(t, attach.RegistryOptions{MaxSessions: 2, Now: c.Now, RedeemWithin: time.Minute})
	alice := testHolder("alice")
	offer(t, r, "a", alice)
	_, raw := offer(t, r, "b", alice)
	if _, _, err := r.Redeem(raw, alice); err != nil {
		t.Fatal(err)
	}
	_, err := r.Offer(attach.Target{Name: "c"}, alice)
	wantCode(t, err, proto.CodeResourceExhausted, "--max-sessions 2")

	// An offer nobody redeems gives its slot back; a redeemed one that is
	// never served does too.
	c.Add(time.Minute + time.Second)
	offer(t, r, "c", alice)
	offer(t, r, "d", alice)
	_, err = r.Offer(attach.Target{Name: "e"}, alice)
	wantCode(t, err, proto.CodeResourceExhausted, "--max-sessions 2")
}

func TestClosedRegistryRefuses(t *testing.T) {
	r := newRegistry(t, attach.RegistryOptions{})
	alice := testHolder("alice")
	_, raw := offer(t, r, "shell", alice)
	r.Close(attach.ReasonManagerRestart)
	_, err := r.Offer(attach.Target{Name: "shell"}, alice)
	wantCode(t, err, proto.CodeUnavailable, "manager-restart")
	_, _, err = r.Redeem(raw, alice)
	wantCode(t, err, proto.CodeUnavailable, "manager-restart")
}
