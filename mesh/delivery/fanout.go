package delivery

import (
	"context"
	"encoding/json"
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
// is acked only after every copy is stored; any failure naks it and the
// whole set is redone (copies are idempotent by their ids).
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
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	s.endMu.RLock()
	defer s.endMu.RUnlock()
	targets, err := s.targets(ctx, d, meta.Sequence.Stream)
	if err != nil {
		s.logf("fan-out of CHAT seq %d: %v (retrying)", meta.Sequence.Stream, err)
		_ = m.NakWithDelay(retryDelay)
		return
	}
	// All copies go out at once and the post is acked when every one is
	// stored: the fsyncs overlap instead of queueing one behind another.
	futures := make([]jetstream.PubAckFuture, 0, len(targets))
	for _, t := range targets {
		e := Entry{Msg: d.Msg, Channel: d.Subject.Channel, Seq: meta.Sequence.Stream, Reason: t.reason, Generation: t.gen}
		f, err := s.writeEntryAsync(t, e)
		if err != nil {
			s.logf("fan-out of CHAT seq %d to %s: %v (retrying)", meta.Sequence.Stream, t.p, err)
			_ = m.NakWithDelay(retryDelay)
			return
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			s.logf("fan-out of CHAT seq %d: %v (retrying)", meta.Sequence.Stream, err)
			_ = m.NakWithDelay(retryDelay)
			return
		case <-ctx.Done():
			_ = m.NakWithDelay(retryDelay)
			return
		}
	}
	_ = m.DoubleAck(ctx)
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
