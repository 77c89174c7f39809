package mesh

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/wire"
)

// storedNotices hands each stored notice of this endpoint's principal to
// the publish waiting for it. The streams agents publish to acknowledge
// nothing (a PubAck goes wherever the publisher's reply subject says, and
// could be aimed at any key of the space); they republish the headers of
// every message they store on the sender's stored-notice subject, which
// only the sender may read. Every process of one principal hears all of
// its notices and takes those of the ids it waits on. mu guards waits.
type storedNotices struct {
	once sync.Once
	err  error // the subscription could not be made
	sub  *nats.Subscription

	// refused is closed when the broker refuses the subscription (a
	// credential minted before stored notices existed); refusal says why.
	refused chan struct{}
	refusal error

	mu    sync.Mutex
	waits map[string]chan storedNotice // message id -> the publish waiting
}

// storedNotice is where a stream stored one message.
type storedNotice struct {
	stream string
	seq    uint64
}

// notices subscribes to this endpoint's stored notices on first use.
func (e *Endpoint) notices() (*storedNotices, error) {
	n := &e.stored
	n.once.Do(func() {
		n.waits = map[string]chan storedNotice{}
		n.refused = make(chan struct{})
		filter := wire.StoredFilter(e.space, e.me)
		refused, stop := e.perms.Watch(filter)
		go func() {
			defer stop()
			select {
			case err := <-refused:
				n.refusal = err
				close(n.refused)
			case <-e.ctx.Done():
			}
		}()
		n.sub, n.err = e.nc.Subscribe(filter, n.take)
	})
	if n.err != nil {
		return nil, fmt.Errorf("listening for stored notices: %w", n.err)
	}
	return n, nil
}

// take hands one notice to the publish waiting on its message id.
func (n *storedNotices) take(m *nats.Msg) {
	id := m.Header.Get(nats.MsgIdHdr)
	seq, err := strconv.ParseUint(m.Header.Get("Nats-Sequence"), 10, 64)
	if id == "" || err != nil {
		return
	}
	n.mu.Lock()
	ch := n.waits[id]
	delete(n.waits, id)
	n.mu.Unlock()
	if ch != nil {
		ch <- storedNotice{stream: m.Header.Get("Nats-Stream"), seq: seq}
	}
}

// expect registers a wait for message id; forget ends it.
func (n *storedNotices) expect(id string) (<-chan storedNotice, error) {
	ch := make(chan storedNotice, 1)
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, dup := n.waits[id]; dup {
		return nil, fmt.Errorf("message id %q is already being sent from this endpoint", id)
	}
	n.waits[id] = ch
	return ch, nil
}

func (n *storedNotices) forget(id string) {
	n.mu.Lock()
	delete(n.waits, id)
	n.mu.Unlock()
}

// close ends the subscription; a notices call after it subscribes nothing.
func (n *storedNotices) close() {
	n.once.Do(func() { n.err = ErrClosed })
	if n.sub != nil {
		_ = n.sub.Unsubscribe()
	}
}

// publishStored publishes one message with Nats-Msg-Id = id and waits for
// the stream's stored notice of it. A refusal by the broker's ACL fails at
// once with what was refused, instead of waiting for a notice that will
// never come.
func (e *Endpoint) publishStored(ctx context.Context, subject, id string, data []byte, what string) (storedNotice, error) {
	n, err := e.notices()
	if err != nil {
		return storedNotice{}, err
	}
	stored, err := n.expect(id)
	if err != nil {
		return storedNotice{}, err
	}
	defer n.forget(id)
	refused, stop := e.perms.Watch(subject)
	defer stop()
	msg := nats.NewMsg(subject)
	msg.Header.Set(nats.MsgIdHdr, id)
	msg.Data = data
	if err := e.nc.PublishMsg(msg); err != nil {
		return storedNotice{}, fmt.Errorf("could not %s: %w", what, err)
	}
	select {
	case s := <-stored:
		return s, nil
	case err := <-refused:
		return storedNotice{}, refuse(ErrNotAllowed, "not allowed to %s: the broker refused it (%v)", what, err)
	case <-n.refused:
		return storedNotice{}, refuse(ErrNotAllowed, "could not %s: this credential may not hear the mesh confirm a store (minted before stored notices existed? mint it again): %v", what, n.refusal)
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return storedNotice{}, fmt.Errorf("could not %s: the mesh did not confirm storing it (%w); a message it refused as too large, or an id it already stored, is never confirmed", what, ctx.Err())
		}
		return storedNotice{}, fmt.Errorf("could not %s: %w", what, ctx.Err())
	}
}
