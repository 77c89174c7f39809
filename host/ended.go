package host

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/wire"
)

// followRevocations makes this process end every lifecycle whose
// credential is revoked, whoever revokes it (`cotal mint` in another
// process, a seat's stop under any manager), and catches up with what
// ended while no mesh ran: seats a crashed process left, revocations
// recorded while the mesh was down.
func (h *Host) followRevocations(ctx context.Context, nc *nats.Conn) error {
	stop, err := h.broker.OnRevoked(func(r broker.Revocation) {
		if broker.IsLinkPrincipal(r.Principal) {
			return // a leaf's link credential: the server closed its link, and no lifecycle was its
		}
		p, err := wire.ParsePrincipal(r.Principal)
		if err != nil {
			h.logf("revocation of %q names no principal: %v", r.Principal, err)
			return
		}
		ctx, cancel := context.WithTimeout(h.life, 10*time.Second)
		defer cancel()
		h.lifecycleEnded(ctx, p, r.UID)
	})
	if err != nil {
		return fmt.Errorf("following revocations: %w", err)
	}
	h.unwatch = stop
	if err := issue.RetireOrphanSeats(ctx, h.cfg.Paths, nc, h.resume.Lifecycles()); err != nil {
		return fmt.Errorf("revoking the credentials of seats a stopped process left: %w", err)
	}
	return h.endRevokedWhileDown(ctx, nc)
}

// endRevokedWhileDown ends the lifecycles revoked while no mesh ran: the
// revoked ones whose ACL row is still there.
func (h *Host) endRevokedWhileDown(ctx context.Context, nc *nats.Conn) error {
	revs := h.broker.Authority().Revocations()
	if len(revs) == 0 {
		return nil
	}
	type ended struct {
		p   wire.Principal
		uid string
	}
	byRow := make(map[string]ended, len(revs))
	for _, r := range revs {
		if p, err := wire.ParsePrincipal(r.Principal); err == nil {
			byRow[wire.ACLKey(p, r.UID)] = ended{p, r.UID}
		}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	kv, err := js.KeyValue(ctx, wire.ACLBucket(h.cfg.Paths.Space))
	if err != nil {
		return fmt.Errorf("ACL bucket of %s: %w", h.cfg.Paths.Space, err)
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return fmt.Errorf("listing the ACL rows of %s: %w", h.cfg.Paths.Space, err)
	}
	var todo []ended
	for k := range keys.Keys() {
		if e, ok := byRow[k]; ok {
			todo = append(todo, e)
		}
	}
	for _, e := range todo {
		h.lifecycleEnded(ctx, e.p, e.uid)
	}
	return nil
}

// lifecycleEnded is the mesh process's hook for a lifecycle whose
// credential was revoked (its name re-minted, its seat stopped, its seat
// orphaned by a crash), whichever process revoked it; it may run more than
// once for one lifecycle. The broker already refuses the credential. Here
// the delivery service ends the lifecycle: its read ACL row is marked
// ended (granting nothing), its durable memberships are tombstoned and its
// stored copies and durables go. An open mesh has none of these.
func (h *Host) lifecycleEnded(ctx context.Context, p wire.Principal, uid string) {
	// Ending is idempotent, so a run that another revocation's account
	// update interrupts is made again (broker.RetryNoResponders).
	err := broker.RetryNoResponders(ctx, func() error {
		if d := h.Delivery(); d != nil {
			return d.EndLifecycle(ctx, p, uid)
		}
		nc, err := h.broker.Internal()
		if err != nil {
			return err
		}
		return issue.DeleteACLRow(ctx, nc, h.cfg.Paths.Space, p, uid)
	})
	if err != nil {
		h.logf("ending lifecycle %s %s: %v", p, uid, err)
	}
	if h.cfg.OnLifecycleEnded != nil {
		h.cfg.OnLifecycleEnded(p, uid)
	}
}
