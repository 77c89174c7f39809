package delivery_test

import (
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/wire"
)

// shortenAckWait makes a member's backstop redeliver after d instead of
// the space's 60 s, so a test need not sit that out: the broker's
// redelivery is the same mechanism.
func (h *harness) shortenAckWait(id broker.Identity, d time.Duration) {
	h.t.Helper()
	cons, err := h.js.Consumer(ctxT(h.t), wire.DlvStream(space), wire.DlvConsumer(id.Principal, id.UID))
	if err != nil {
		h.t.Fatal(err)
	}
	cfg := cons.CachedInfo().Config
	cfg.AckWait = d
	if _, err := h.js.UpdateConsumer(ctxT(h.t), wire.DlvStream(space), cfg); err != nil {
		h.t.Fatal(err)
	}
}

// storedFor counts what the stream keeps on one subject.
func (h *harness) storedFor(stream, subject string) uint64 {
	h.t.Helper()
	st, err := h.js.Stream(ctxT(h.t), stream)
	if err != nil {
		h.t.Fatal(err)
	}
	info, err := st.Info(ctxT(h.t), jetstream.WithSubjectFilter(subject))
	if err != nil {
		h.t.Fatal(err)
	}
	return info.State.Subjects[subject]
}

// putMembership writes a membership row straight into the bucket, as an
// activation that a crash interrupted leaves it; the service reads it when
// it next starts serving.
func (h *harness) putMembership(id broker.Identity, channel string, cursor uint64) {
	h.t.Helper()
	kv, err := h.js.KeyValue(ctxT(h.t), wire.MembersBucket(space))
	if err != nil {
		h.t.Fatal(err)
	}
	m := delivery.Membership{
		Channel: channel, Owner: id.Principal.ID(), LifecycleUID: id.UID, State: delivery.StateActive,
		JoinCursor: cursor, Generation: 1, UpdatedAt: time.Now().UTC(),
	}
	b, _ := json.Marshal(m)
	key := "m." + id.Principal.Owner + "." + id.Principal.Actor + "." + id.UID + "." + channel
	if _, err := kv.Put(ctxT(h.t), key, b); err != nil {
		h.t.Fatal(err)
	}
}
