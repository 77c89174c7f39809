package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Reasons a stored copy exists.
const (
	ReasonDurable = "durable-channel"
	ReasonMention = "live-mention"
)

// Entry is one stored copy on its way to a member: written by the fan-out
// to the member's INBOX subject, checked and framed by the reader.
type Entry struct {
	Msg        wire.Message `json:"msg"`
	Channel    string       `json:"channel"`
	Seq        uint64       `json:"seq"` // CHAT sequence of the post
	Reason     string       `json:"reason"`
	Generation uint64       `json:"generation"`
}

// copyID is the dedup id of a member's copy: one per message and member
// lifecycle, so a member holding a family and a channel under it by name
// still gets each post once within the 2 h window, and a copy redone
// after a crash is stored once. A post with an empty id is named by its
// CHAT sequence instead: two such posts are never coalesced, and each is
// still stored once per member.
func copyID(msgID string, seq uint64, p wire.Principal, uid string) string {
	if msgID == "" {
		msgID = "seq-" + strconv.FormatUint(seq, 10)
	}
	return msgID + ":" + p.ID() + ":" + uid
}

// target is one member owed a copy.
type target struct {
	p      wire.Principal
	uid    string
	gen    uint64
	reason string
}

// onChat is the fan-out writer: every CHAT post, in stream order. The post
// is acked only after every copy is stored; a failure naks it and the whole
// set is redone (copies are idempotent by their ids), up to maxDeliver
// tries. A post whose copies cannot be stored at all (larger than a copy
// may be), or still not after maxDeliver tries, is terminated: one log line,
// and a notice to its sender.
func (s *Service) onChat(m jetstream.Msg) {
	meta, err := m.Metadata()
	if err != nil {
		_ = m.Term()
		return
	}
	d, reject, _ := wire.Decode(m.Subject(), m.Data())
	if reject != "" || d.Subject.Kind != wire.KindChannel || wire.ServerAuthored(m.Headers()) {
		_ = m.Ack() // not a post anyone is owed
		return
	}
	seq := meta.Sequence.Stream
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	retry := func(err error) {
		if meta.NumDelivered >= maxDeliver {
			s.fanoutFailed(ctx, m, d, seq, fmt.Sprintf("still failing after %d tries: %v", meta.NumDelivered, err))
			return
		}
		s.logf("fan-out of CHAT seq %d: %v (retrying)", seq, err)
		_ = m.NakWithDelay(retryDelay)
	}
	targets, err := s.targets(ctx, d, seq)
	if err != nil {
		retry(err)
		return
	}
	// All copies go out at once and the post is acked when every one is
	// stored: the fsyncs overlap instead of queueing one behind another.
	futures := make([]jetstream.PubAckFuture, 0, len(targets))
	for _, t := range targets {
		if !s.gate.begin(t.p, t.uid) {
			continue // ended since it was found: nothing is owed to it
		}
		defer s.gate.finish(t.p, t.uid)
		e := Entry{Msg: d.Msg, Channel: d.Subject.Channel, Seq: seq, Reason: t.reason, Generation: t.gen}
		f, err := s.writeEntryAsync(t, e)
		if errors.Is(err, nats.ErrMaxPayload) {
			s.fanoutFailed(ctx, m, d, seq, fmt.Sprintf("a stored copy of it would be larger than the %d bytes a message may be", s.nc.MaxPayload()))
			return
		}
		if err != nil {
			retry(fmt.Errorf("to %s: %w", t.p, err))
			return
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			var apiErr *jetstream.APIError
			if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum {
				s.fanoutFailed(ctx, m, d, seq, "a stored copy of it is larger than the backstop stream takes")
				return
			}
			retry(err)
			return
		case <-ctx.Done():
			retry(ctx.Err())
			return
		}
	}
	_ = m.DoubleAck(ctx)
}

// fanoutFailed terminates a post whose copies cannot be stored, saying so
// once in the log and once to its sender: a notice stored on the backstop
// of each of the sender's live lifecycles, which arrives like a copy.
func (s *Service) fanoutFailed(ctx context.Context, m jetstream.Msg, d wire.Delivery, seq uint64, why string) {
	_ = m.Term()
	ch, sender := d.Subject.Channel, d.Subject.Sender
	s.logf("fan-out of CHAT seq %d (%s to #%s) terminated: %s; its members get no stored copy", seq, sender, ch, why)
	text := fmt.Sprintf("cotal: your post %s to #%s (CHAT seq %d) reached no member's stored copies: %s. It is in the channel's history; members who were not listening did not get it.", d.Msg.ID, ch, seq, why)
	for _, uid := range s.life.liveUIDs(sender) {
		s.storeNotice(ctx, sender, uid, ch, text)
	}
}

// storeNotice stores one of the service's own notices on a member
// lifecycle's backstop subject.
func (s *Service) storeNotice(ctx context.Context, p wire.Principal, uid, channel, text string) {
	msg := wire.Message{
		ID: wire.NewID(), TS: time.Now().UnixMilli(), Space: s.space, Channel: channel,
		From: wire.Sender{ID: NoticeSender.ID(), Name: NoticeSender.Actor}, Parts: wire.TextParts(text),
	}
	body, _ := json.Marshal(mesh.Frame{Version: 1, Channel: channel, Msg: msg})
	out := nats.NewMsg(wire.DlvSubject(s.space, p, uid))
	out.Header.Set(mesh.FrameHeader, "1")
	out.Data = body
	if _, err := s.js.PublishMsg(ctx, out); err != nil {
		s.logf("notice for %s.%s: %v", p, uid, err)
	}
}

// writeEntryAsync stores one copy without waiting for its ack.
func (s *Service) writeEntryAsync(t target, e Entry) (jetstream.PubAckFuture, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	msg := nats.NewMsg(wire.InboxSubject(s.space, t.p, t.uid))
	msg.Data = body
	return s.js.PublishMsgAsync(msg, jetstream.WithMsgID(copyID(e.Msg.ID, e.Seq, t.p, t.uid)))
}

// targets decides who is owed a copy of the post at seq, reading the
// channel's class fresh. A lifecycle that has ended is owed nothing, even
// when nobody told this service it ended.
func (s *Service) targets(ctx context.Context, d wire.Delivery, seq uint64) ([]target, error) {
	ch := d.Subject.Channel
	eff, err := s.reg.Effective(ctx, ch)
	if err != nil {
		return nil, err
	}
	sender := d.Subject.Sender.ID()
	seen := map[string]bool{}
	var out []target
	if eff.Class == mesh.ClassDurable {
		for _, m := range s.store.matching(ch) {
			key := m.Owner + "/" + m.LifecycleUID
			if m.Owner == sender || !m.Eligible(seq) || seen[key] {
				continue
			}
			seen[key] = true
			live, err := s.life.live(ctx, m.Principal(), m.LifecycleUID)
			if errors.Is(err, errForeignEntry) {
				// That member's row is unreadable: it gets no copy of
				// this post, and the others are not held up by it.
				s.warnOnce("acl:"+m.Owner+"."+m.LifecycleUID, "fan-out skips %s.%s: %v", m.Owner, m.LifecycleUID, err)
				continue
			}
			if err != nil {
				return nil, err
			}
			if live {
				out = append(out, target{p: m.Principal(), uid: m.LifecycleUID, gen: m.Generation, reason: ReasonDurable})
			}
		}
		return out, nil
	}
	// A live channel stores nothing, except for those it @mentions.
	ms, err := s.resolveMentions(ctx, d.Subject.Sender, ch, d.Msg.Mentions)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		key := m.p.ID() + "/" + m.LifecycleUID
		if !m.Stored || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, target{p: m.p, uid: m.LifecycleUID, reason: ReasonMention})
	}
	return out, nil
}

// writeEntry stores one copy on the member's INBOX subject.
func (s *Service) writeEntry(ctx context.Context, t target, e Entry) error {
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	msg := nats.NewMsg(wire.InboxSubject(s.space, t.p, t.uid))
	msg.Data = body
	_, err = s.js.PublishMsg(ctx, msg, jetstream.WithMsgID(copyID(e.Msg.ID, e.Seq, t.p, t.uid)))
	return err
}
