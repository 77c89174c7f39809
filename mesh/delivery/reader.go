package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// onEntry is the trusted reader: each stored copy is checked against the
// member lifecycle's read ACL and, for a durable channel, its membership,
// both read fresh, then framed onto the member's backstop subject. The
// INBOX entry is acked only after the transfer.
func (s *Service) onEntry(m jetstream.Msg) {
	p, uid, ok := s.parseInboxSubject(m.Subject())
	if !ok {
		_ = m.Ack() // not a member subject: nothing to deliver
		return
	}
	var e Entry
	if err := json.Unmarshal(m.Data(), &e); err != nil || wire.ValidateConcreteChannel(e.Channel) != nil {
		s.warnOnce("entry:"+p.ID()+"."+uid, "stored copy for %s.%s skipped: it is no copy the fan-out wrote", p, uid)
		_ = m.Ack()
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	row, found, err := s.aclRow(ctx, p, uid)
	if err != nil {
		// Held, not dropped: the copy waits until the row reads again
		// (the next start rewrites it), and only this member waits.
		s.warnOnce("acl:"+p.ID()+"."+uid, "stored copies for %s.%s wait: %v", p, uid, err)
		_ = m.NakWithDelay(retryDelay)
		return
	}
	if !found {
		// An unknown lifecycle may still be being provisioned; after
		// maxDeliver tries the copy is terminated, loudly.
		if meta, err := m.Metadata(); err == nil && meta.NumDelivered >= maxDeliver {
			s.logf("stored copy for %s.%s terminated: no read ACL on record after %d tries", p, uid, meta.NumDelivered)
			_ = m.Term()
			return
		}
		_ = m.NakWithDelay(retryDelay)
		return
	}
	// Begun on the gate until the transfer is stored (or refused), so a
	// lifecycle marked ended meanwhile gets nothing after the mark.
	if row.Ended() || !s.gate.begin(p, uid) {
		_ = m.Ack() // the lifecycle ended: nothing is owed to it any more
		return
	}
	handed := false
	defer func() {
		if !handed {
			s.gate.finish(p, uid)
		}
	}()
	if !wire.Covered(row.AllowSubscribe, e.Channel) {
		_ = m.Ack() // the ACL no longer covers it: revoked
		return
	}
	if e.Reason == ReasonDurable && !s.store.owed(p, uid, e.Channel, e.Seq) {
		_ = m.Ack() // left or rejoined since: not owed any more
		return
	}
	msg := e.Msg
	msg.Channel, msg.To, msg.ToService = e.Channel, "", ""
	body, err := json.Marshal(mesh.Frame{Version: 1, Channel: e.Channel, Msg: msg})
	if err != nil {
		_ = m.Term()
		return
	}
	out := nats.NewMsg(wire.DlvSubject(s.space, p, uid))
	out.Header.Set(mesh.FrameHeader, "1")
	out.Data = body
	var opts []jetstream.PublishOpt
	if id := m.Headers().Get(nats.MsgIdHdr); id != "" {
		opts = append(opts, jetstream.WithMsgID(id))
	}
	// The transfer is acknowledged off the consumer's goroutine, so the
	// next entry's checks overlap this one's fsync.
	f, err := s.js.PublishMsgAsync(out, opts...)
	if err != nil {
		s.transferFailed(m, p, uid, err)
		return
	}
	s.inflight.Add(1)
	handed = true
	go func() {
		defer s.inflight.Done()
		defer s.gate.finish(p, uid)
		ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
		defer cancel()
		select {
		case <-f.Ok():
			s.noteStored(ctx, p, uid, e.Channel)
			_ = m.DoubleAck(ctx)
		case err := <-f.Err():
			s.transferFailed(m, p, uid, err)
		case <-ctx.Done():
			_ = m.NakWithDelay(retryDelay)
		}
	}()
}

// transferFailed retries a copy later, or terminates it loudly after
// maxDeliver tries.
func (s *Service) transferFailed(m jetstream.Msg, p wire.Principal, uid string, err error) {
	if meta, merr := m.Metadata(); merr == nil && meta.NumDelivered >= maxDeliver {
		s.logf("stored copy for %s.%s terminated after %d failed transfers: %v", p, uid, meta.NumDelivered, err)
		_ = m.Term()
		return
	}
	_ = m.NakWithDelay(retryDelay)
}

// MaxStoredCopies is how many copies a member's backstop keeps; past it
// the oldest is discarded (the DLV stream's per-subject limit).
const MaxStoredCopies = 1000

// NoticeSender is the principal the service's own notices come from.
var NoticeSender = wire.Principal{Owner: "local", Actor: "cotal_delivery"}

// noteStored counts a copy into the member's backstop; when the backstop
// is full, the member gets one notice per overflow episode, stored like a
// copy so it arrives once, with the rest, when the member returns.
func (s *Service) noteStored(ctx context.Context, p wire.Principal, uid, channel string) {
	key := p.ID() + "." + uid
	s.mu.Lock()
	if s.stored == nil {
		s.stored = map[string]*backlog{}
	}
	b := s.stored[key]
	if b == nil {
		b = &backlog{}
		s.stored[key] = b
	}
	b.estimate++
	check := b.estimate >= MaxStoredCopies
	s.mu.Unlock()
	if !check {
		return
	}
	cons, err := s.js.Consumer(ctx, wire.DlvStream(s.space), wire.DlvConsumer(p, uid))
	if err != nil {
		return
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return
	}
	held := int(info.NumPending) + info.NumAckPending
	s.mu.Lock()
	b.estimate = held
	notify := held >= MaxStoredCopies && !b.overflowing
	// Re-arm only once the member has read well below the cap, so a
	// backstop hovering at it does not repeat the notice.
	if held >= MaxStoredCopies {
		b.overflowing = true
	} else if held < MaxStoredCopies*9/10 {
		b.overflowing = false
	}
	s.mu.Unlock()
	if !notify {
		return
	}
	text := fmt.Sprintf("cotal: your stored copies overflowed: the backstop keeps the newest %d per member and has started dropping the oldest; read the channel history (cotal history <channel>) for what you missed", MaxStoredCopies)
	s.storeNotice(ctx, p, uid, channel, text)
}

// backlog is the service's running estimate of one member's backstop.
type backlog struct {
	estimate    int
	overflowing bool // a notice went out for this episode
}

// parseInboxSubject reads `cotal.<s>.dinbox.<owner>.<actor>.<uid>`.
func (s *Service) parseInboxSubject(subject string) (wire.Principal, string, bool) {
	rest, ok := strings.CutPrefix(subject, wire.Root(s.space)+".dinbox.")
	if !ok {
		return wire.Principal{}, "", false
	}
	t := strings.Split(rest, ".")
	if len(t) != 3 {
		return wire.Principal{}, "", false
	}
	p := wire.Principal{Owner: t[0], Actor: t[1]}
	if p.Valid() != nil || !wire.ValidLifecycleUID(t[2]) {
		return wire.Principal{}, "", false
	}
	return p, t[2], true
}
