package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// casRetries bounds the compare-and-set retries of one record write.
const casRetries = 5

// EndLifecycle ends a member lifecycle for durable delivery, for good: its
// read ACL row is marked ended (so neither the fan-out nor the reader
// stores or hands over anything for it again, whatever else is missed),
// every membership it holds is tombstoned, and its stored copies go: its
// INBOX and DLV subjects are purged and its backstop durable deleted.
// Stop, despawn and revocation call it once the lifecycle's connector
// has stopped. Ending an ended or unknown lifecycle is not an error.
func (s *Service) EndLifecycle(ctx context.Context, p wire.Principal, uid string) error {
	if err := p.Valid(); err != nil {
		return err
	}
	if !wire.ValidLifecycleUID(uid) {
		return fmt.Errorf("lifecycle uid %q is not valid", uid)
	}
	// Every copy being stored for it lands before the purge below, and
	// none is started after the mark. The wait is outside ctlMu, so the
	// end of one lifecycle never holds up another's.
	if err := s.gate.end(ctx, p, uid); err != nil {
		return fmt.Errorf("ending %s.%s: waiting for the copies being stored for it: %w; it is marked ended, end it again to remove what it holds", p, uid, err)
	}
	s.ctlMu.Lock() // no join of this lifecycle runs meanwhile
	defer s.ctlMu.Unlock()

	var errs []error
	if err := s.markACLEnded(ctx, p, uid); err != nil {
		errs = append(errs, fmt.Errorf("marking the read ACL of %s.%s ended: %w", p, uid, err))
	}
	if err := s.tombstoneAll(ctx, p, uid); err != nil {
		errs = append(errs, err)
	}
	for _, c := range []struct{ stream, subject string }{
		{wire.InboxStream(s.space), wire.InboxSubject(s.space, p, uid)},
		{wire.DlvStream(s.space), wire.DlvSubject(s.space, p, uid)},
	} {
		st, err := s.js.Stream(ctx, c.stream)
		if err == nil {
			err = st.Purge(ctx, jetstream.WithPurgeSubject(c.subject))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("removing the stored copies on %s: %w", c.subject, err))
		}
	}
	// Its durables go too: a successor lifecycle of the name never
	// inherits its DMs (spec item 48), so nothing can read them any more.
	// Their senders are told first.
	s.noteDropped(ctx, p, uid)
	for _, c := range []struct{ stream, name string }{
		{wire.DlvStream(s.space), wire.DlvConsumer(p, uid)},
		{wire.DMStream(s.space), wire.DMConsumer(p, uid)},
	} {
		if err := s.js.DeleteConsumer(ctx, c.stream, c.name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			errs = append(errs, fmt.Errorf("deleting the durable %s: %w", c.name, err))
		}
	}
	s.mu.Lock()
	delete(s.stored, p.ID()+"."+uid)
	s.mu.Unlock()
	return errors.Join(errs...)
}

// markACLEnded writes the lifecycle's ACL row as ended, granting nothing;
// a lifecycle with no row gets an ended one, so it is never taken for one
// still being provisioned.
func (s *Service) markACLEnded(ctx context.Context, p wire.Principal, uid string) error {
	key := wire.ACLKey(p, uid)
	var err error
	for range casRetries {
		var ent jetstream.KeyValueEntry
		ent, err = s.aclKV.Get(ctx, key)
		row := wire.ACLRow{Principal: p.ID(), LifecycleUID: uid, IssuedAllowSubscribe: []string{}}
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return err
		default:
			if json.Unmarshal(ent.Value(), &row) == nil && row.Ended() {
				return nil
			}
		}
		now := time.Now().UTC()
		row.AllowSubscribe, row.EndedAt, row.UpdatedAt = []string{}, now, now
		row.Revision++
		b, _ := json.Marshal(row)
		if ent == nil {
			_, err = s.aclKV.Create(ctx, key, b)
		} else {
			_, err = s.aclKV.Update(ctx, key, b, ent.Revision())
		}
		if err == nil {
			return nil
		}
	}
	return err
}

// tombstoneAll ends every open membership of the lifecycle at the CHAT
// frontier, reading each fresh from the bucket, since this service may
// not be the one serving.
func (s *Service) tombstoneAll(ctx context.Context, p wire.Principal, uid string) error {
	lister, err := s.store.kv.ListKeysFiltered(ctx, membershipPrefix(p, uid)+">")
	if err != nil {
		return fmt.Errorf("listing the memberships of %s.%s: %w", p, uid, err)
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	front, err := s.frontier(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, key := range keys {
		if err := s.tombstone(ctx, key, front); err != nil {
			errs = append(errs, fmt.Errorf("ending membership %s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

func (s *Service) tombstone(ctx context.Context, key string, front uint64) error {
	var err error
	for range casRetries {
		var ent jetstream.KeyValueEntry
		if ent, err = s.store.kv.Get(ctx, key); err != nil {
			return err
		}
		var m Membership
		if err := json.Unmarshal(ent.Value(), &m); err != nil {
			return err
		}
		m.rev = ent.Revision()
		if m.Left() {
			s.store.remember(key, m)
			return nil
		}
		m.State, m.LeaveCursor = StateLeft, front
		if _, err = s.store.put(ctx, m); err == nil {
			return nil
		}
	}
	return err
}

// maxDropNotes bounds the receipts one ended lifecycle sends for the DMs
// it never settled.
const maxDropNotes = 1000

// WhyLifecycleEnded is the reason a DM's receipt gives when its
// recipient's lifecycle ended before it settled the DM.
const WhyLifecycleEnded = "dropped: the recipient's lifecycle ended (a stop, a respawn or a revocation) before it read it; a new lifecycle of the name never gets it"

// noteDropped tells the sender of every DM the lifecycle had not settled
// (past its durable's ack floor) that it was dropped and why: the durable
// goes next, and with it the last way to read them. Best effort: a
// receipt is advice, and a failure here keeps nothing alive.
func (s *Service) noteDropped(ctx context.Context, p wire.Principal, uid string) {
	cons, err := s.js.Consumer(ctx, wire.DMStream(s.space), wire.DMConsumer(p, uid))
	if err != nil {
		return
	}
	info, err := cons.Info(ctx)
	if err != nil || info.NumPending+uint64(info.NumAckPending) == 0 {
		return
	}
	oc, err := s.js.OrderedConsumer(ctx, wire.DMStream(s.space), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{wire.DMFilter(s.space, p)},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy, OptStartSeq: info.AckFloor.Stream + 1,
	})
	if err != nil {
		return
	}
	now := time.Now().UTC()
	for sent := 0; sent < maxDropNotes; {
		batch, err := oc.FetchNoWait(256)
		if err != nil {
			return
		}
		n, last := 0, false
		for m := range batch.Messages() {
			n++
			meta, merr := m.Metadata()
			if merr == nil && meta.NumPending == 0 {
				last = true
			}
			d, reject, _ := wire.Decode(m.Subject(), m.Data())
			if reject != "" || wire.ServerAuthored(m.Headers()) {
				continue
			}
			subject, ok := wire.ReceiptSubject(s.space, d.Subject.Sender, d.Msg.ID)
			if !ok {
				continue
			}
			b, _ := json.Marshal(wire.DeliveryNote{ID: d.Msg.ID, To: p.ID(), Rung: wire.RungAcked, Why: WhyLifecycleEnded, At: now})
			if s.nc.Publish(subject, b) == nil {
				sent++
			}
		}
		if n == 0 || last || ctx.Err() != nil {
			_ = s.nc.Flush()
			return
		}
	}
	_ = s.nc.Flush()
}
