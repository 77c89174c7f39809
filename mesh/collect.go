package mesh

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Collect is the one-shot inbox read of a CLI command: it fetches what is
// stored for this endpoint (DMs and role tasks) without waiting, adds the
// channel posts its live subscriptions caught, and, when that is nothing
// and wait is positive, waits up to wait for the first arrival. Items come
// back directed first, un-acked: the caller acks each once handed over.
func (e *Endpoint) Collect(ctx context.Context, wait time.Duration) ([]*Item, error) {
	return e.CollectN(ctx, MaxInbox, wait)
}

// CollectN is Collect handing over at most max items; the rest stay
// queued, un-acked, for the next read.
func (e *Endpoint) CollectN(ctx context.Context, max int, wait time.Duration) ([]*Item, error) {
	if max <= 0 || max > MaxInbox {
		max = MaxInbox
	}
	if e.mediated {
		if err := e.takeRemote(ctx, max, 0); err != nil {
			return nil, err
		}
		if e.inbox.size() == 0 && wait > 0 {
			if err := e.takeRemote(ctx, max, wait); err != nil {
				return nil, err
			}
		}
		return e.inbox.take(max), nil
	}
	if err := e.fetchStored(ctx); err != nil {
		return nil, err
	}
	if e.inbox.size() == 0 && wait > 0 {
		// Poll with no-wait fetches rather than leave a pull request
		// open: a message the broker routes to a pull nobody reads any
		// more would sit un-acked until AckWait.
		deadline := time.NewTimer(wait)
		defer deadline.Stop()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
	wait:
		for e.inbox.size() == 0 {
			select {
			case <-e.inbox.notify:
			case <-tick.C:
				if err := e.fetchStored(ctx); err != nil {
					return nil, err
				}
			case <-deadline.C:
				break wait
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return e.inbox.take(max), nil
}

// fetchStored pulls everything pending on the DM and role durables without
// waiting for more.
func (e *Endpoint) fetchStored(ctx context.Context) error {
	for _, c := range []jetstream.Consumer{e.dm, e.svc, e.dlv} {
		if c == nil {
			continue
		}
		handler := e.onDurable
		if c == e.dlv {
			handler = e.onFrame
		}
		for e.inbox.size() < MaxInbox {
			batch, err := c.FetchNoWait(MaxInbox - e.inbox.size())
			if err != nil {
				return err
			}
			n := 0
			for m := range batch.Messages() {
				n++
				handler(m)
			}
			if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
				return err
			}
			if n == 0 {
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	return nil
}

// HandOut gives up to max stored items to another process that acks them
// later (the delivery service's host of a mediated agent): waiting up to
// wait for the first, from the running consumers or by fetching. A handed
// out item is not yet handled, so a redelivered copy of it is surfaced
// again rather than acked as a duplicate: nothing is lost if the taker
// never settles it.
func (e *Endpoint) HandOut(ctx context.Context, max int, wait time.Duration) ([]*Item, error) {
	var items []*Item
	if e.consuming() {
		items = e.Await(ctx, max, wait)
	} else {
		var err error
		if items, err = e.CollectN(ctx, max, wait); err != nil {
			return nil, err
		}
	}
	for _, it := range items {
		e.inbox.forget(it)
	}
	return items, nil
}
