package delivery

import (
	"context"
	"encoding/json"
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
		_ = m.Ack()
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	row, found, err := s.aclRow(ctx, p, uid)
	if err != nil {
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
	if _, err := s.js.PublishMsg(ctx, out, opts...); err != nil {
		if meta, merr := m.Metadata(); merr == nil && meta.NumDelivered >= maxDeliver {
			s.logf("stored copy for %s.%s terminated after %d failed transfers: %v", p, uid, meta.NumDelivered, err)
			_ = m.Term()
			return
		}
		_ = m.NakWithDelay(retryDelay)
		return
	}
	_ = m.DoubleAck(ctx)
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

var _ = context.Background
