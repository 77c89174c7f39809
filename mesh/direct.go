package mesh

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// The DMs of an identity read storage itself (the operator) are shared by
// every process acting as it: each dashboard shows them all, and the DM
// durable, which every reader of the identity takes from, says which are
// settled. A read in any of them acks them once, for all.

// ErrNoDirectInbox is returned by the direct-inbox reads of an endpoint
// that has no DM durable (an observer, or one reading through the
// delivery endpoint).
var ErrNoDirectInbox = errors.New("this endpoint reads no DM inbox of its own")

// Unread is what the DM durable of this endpoint has not settled.
type Unread struct {
	N     int    // stored and not yet acked (pending, or taken and not yet acked)
	Floor uint64 // the DM stream sequence up to which every DM is settled
}

// UnreadDirect says how many DMs of this endpoint's identity wait in its
// durable, whoever of its processes reads them.
func (e *Endpoint) UnreadDirect(ctx context.Context) (Unread, error) {
	if e.mediated || e.dm == nil {
		return Unread{}, ErrNoDirectInbox
	}
	info, err := e.dm.Info(ctx)
	if err != nil {
		return Unread{}, fmt.Errorf("reading the DM inbox of %s: %w", e.me, err)
	}
	return Unread{N: int(info.NumPending) + info.NumAckPending, Floor: info.AckFloor.Stream}, nil
}

// ReadDirect takes what is stored for this endpoint into its inbox now,
// for Next to hand over and its reader to ack: a OneShot endpoint takes
// nothing until asked.
func (e *Endpoint) ReadDirect(ctx context.Context) error {
	if e.mediated || e.dm == nil {
		return ErrNoDirectInbox
	}
	return e.fetchStored(ctx)
}

// WatchDirect hands fn every DM stored for this endpoint's identity from
// stream sequence from on, then each one as it is stored, until ctx ends.
// It only looks: nothing is acked, nothing is taken from the durable.
func (e *Endpoint) WatchDirect(ctx context.Context, from uint64, fn func(seq uint64, d wire.Delivery)) error {
	if e.mediated || e.dm == nil {
		return ErrNoDirectInbox
	}
	cons, err := e.js.OrderedConsumer(ctx, wire.DMStream(e.space), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{wire.DMFilter(e.space, e.me)},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy, OptStartSeq: max(from, 1),
	})
	if err != nil {
		return fmt.Errorf("watching the DMs of %s: %w", e.me, err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		meta, err := m.Metadata()
		if err != nil || wire.ServerAuthored(m.Headers()) {
			return
		}
		if d, reject, _ := wire.Decode(m.Subject(), m.Data()); reject == "" && d.Subject.Kind == wire.KindDM {
			fn(meta.Sequence.Stream, d)
		}
	})
	if err != nil {
		return fmt.Errorf("watching the DMs of %s: %w", e.me, err)
	}
	<-ctx.Done()
	cc.Stop()
	return nil
}
