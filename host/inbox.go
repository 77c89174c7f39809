package host

import (
	"context"
	"fmt"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh"
)

// InboxRead is one one-shot read of an identity's inbox that a mesh crash
// does not make come twice: what an earlier read of the lifecycle handled
// is kept in its handled file under the store.
type InboxRead struct {
	Items   []*mesh.Item
	e       *mesh.Endpoint
	handled string // "" when e is not of the store's space
}

// ReadInbox collects what waits for e, waiting up to wait for the first
// arrival, leaving out what the handled file under p says was read
// before (p is the space this process resolved, known false for none).
func ReadInbox(ctx context.Context, e *mesh.Endpoint, p config.Paths, known bool, wait time.Duration) (*InboxRead, error) {
	r := &InboxRead{e: e}
	if known && p.Space == e.Space() {
		r.handled = p.HandledFile(e.Me().ID(), e.LifecycleUID())
	}
	e.AssumeHandled(config.ReadHandled(r.handled))
	items, err := e.Collect(ctx, wait)
	r.Items = items
	return r, err
}

// Settle acks the items (peek: releases them, to come again) and notes
// them in the handled file. ackErr is the first failed ack (the item comes
// again); noteErr says the note was not written.
func (r *InboxRead) Settle(peek bool) (ackErr, noteErr error) {
	for _, it := range r.Items {
		if peek {
			_ = it.Release()
		} else if err := it.Ack(); err != nil && ackErr == nil {
			ackErr = fmt.Errorf("printed, but the ack failed, so it will come again: %w", err)
		}
	}
	if !peek && len(r.Items) > 0 {
		noteErr = config.WriteHandled(r.handled, r.e.Handled())
	}
	return ackErr, noteErr
}
