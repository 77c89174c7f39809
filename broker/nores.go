package broker

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
)

// While nats-server applies an account JWT (every revocation is one: a
// seat's end, a re-mint), it takes the account's service imports down and
// puts them back, the JetStream API's among them; a JetStream API request
// from that account in between is answered "no responders" although
// JetStream is up. Nothing else answers the JetStream API that way on a
// provisioned mesh, so an idempotent call that gets it is made again.

// noRespondersBound is how long RetryNoResponders keeps trying: the gap is
// one account update, milliseconds even on a loaded machine.
const noRespondersBound = 5 * time.Second

// RetryNoResponders runs op, an idempotent JetStream API operation, again
// while it fails with no responders, for up to a few seconds or until ctx
// ends; any other outcome is returned at once. Not for control calls: there
// "no responders" means the endpoint is not there.
func RetryNoResponders(ctx context.Context, op func() error) error {
	deadline := time.Now().Add(noRespondersBound)
	wait := 2 * time.Millisecond
	for {
		err := op()
		if !errors.Is(err, nats.ErrNoResponders) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}
