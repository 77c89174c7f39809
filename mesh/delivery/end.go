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
	s.ctlMu.Lock() // no join of this lifecycle runs meanwhile
	defer s.ctlMu.Unlock()
	// Alone: every copy being stored for it lands before the mark, and
	// none is started after it.
	s.endMu.Lock()
	s.life.markEnded(p, uid)
	s.endMu.Unlock()

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
