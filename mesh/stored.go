package mesh

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

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

// storedNotice is where a stream stored one message; duplicate says it
// was stored before, by an earlier send of the same id.
type storedNotice struct {
	stream    string
	seq       uint64
	duplicate bool
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

// resendLookup is how long a send again with a caller's id waits for a
// stored notice before it asks whether the id is stored already: the
// streams store a duplicate id once and, acknowledging nothing, say
// nothing of the second.
const resendLookup = 500 * time.Millisecond

// publishStored publishes one message with Nats-Msg-Id = id and waits for
// the stream's stored notice of it. A refusal by the broker's ACL fails at
// once with what was refused, instead of waiting for a notice that will
// never come; no notice in time, or the connection dropping first, is a
// NotConfirmedError (the message may be stored: a send again with the same
// id stores it once). A resend (the caller chose the id) that hears no
// notice looks the id up on its subject.
func (e *Endpoint) publishStored(ctx context.Context, subject, id string, data []byte, what string, resend bool) (storedNotice, error) {
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
	var lookup <-chan time.Time
	if resend {
		t := time.NewTimer(resendLookup)
		defer t.Stop()
		lookup = t.C
	}
	for {
		select {
		case s := <-stored:
			return s, nil
		case err := <-refused:
			return storedNotice{}, refuse(ErrNotAllowed, "not allowed to %s: the broker refused it (%v)", what, err)
		case <-n.refused:
			return storedNotice{}, refuse(ErrNotAllowed, "could not %s: this credential may not hear the mesh confirm a store (minted before stored notices existed? mint it again): %v", what, n.refusal)
		case <-e.conn.lost():
			return storedNotice{}, &NotConfirmedError{ID: id, What: what, Why: "the mesh stopped before acknowledging", Err: ErrConnectionLost}
		case <-lookup:
			lookup = nil
			if s, ok := e.storedAlready(ctx, subject, id); ok {
				return s, nil
			}
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return storedNotice{}, &NotConfirmedError{ID: id, What: what, Why: "no stored notice from the mesh in time", Err: ctx.Err()}
			}
			return storedNotice{}, fmt.Errorf("could not %s: %w", what, ctx.Err())
		}
	}
}

// storedAlready looks for message id as the newest on subject: where a
// send again with an id the mesh stored already finds it. The operator
// reads the stream itself; an agent asks the delivery service, which
// answers only about the caller's own subjects.
func (e *Endpoint) storedAlready(ctx context.Context, subject, id string) (storedNotice, bool) {
	if e.mediated {
		var r StoredReply
		if err := e.call(ctx, wire.DeliveryStored, StoredArgs{Subject: subject, ID: id}, &r); err != nil || !r.Found {
			return storedNotice{}, false
		}
		return storedNotice{stream: r.Stream, seq: r.Seq, duplicate: true}, true
	}
	stream, seq, ok := LastStoredID(ctx, e.js, e.space, subject, id)
	return storedNotice{stream: stream, seq: seq, duplicate: true}, ok
}

// LastStoredID reports whether the newest message on subject (a chat, inst
// or svc subject) carries Nats-Msg-Id id, and where it is stored.
func LastStoredID(ctx context.Context, js jetstream.JetStream, space, subject, id string) (stream string, seq uint64, ok bool) {
	s, err := wire.ParseSubject(subject)
	if err != nil {
		return "", 0, false
	}
	switch s.Kind {
	case wire.KindChannel:
		stream = wire.ChatStream(space)
	case wire.KindDM:
		stream = wire.DMStream(space)
	case wire.KindAnycast:
		stream = wire.TaskStream(space)
	default:
		return "", 0, false
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return "", 0, false
	}
	m, err := st.GetLastMsgForSubject(ctx, subject)
	if err != nil || m.Header.Get(nats.MsgIdHdr) != id {
		return "", 0, false
	}
	return stream, m.Sequence, true
}
