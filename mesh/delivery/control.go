package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// opReply is how the service's join, leave and history operations report;
// the endpoint's commands answer with the narrower wire replies of
// mesh/agentsvc.go. Error set means the operation failed.
type opReply struct {
	Error       *proto.Error // the caller's answer when the operation did not stand
	Durable     bool
	Generation  uint64
	Reason      string
	Existing    bool // the hold was already active: a reconnect, not a join
	AlreadyLeft bool
	Items       []mesh.HistoryItem
	Complete    bool
	// Frontier is the CHAT sequence the answer stands at: the join
	// cursor of a durable hold, or the last sequence a history read saw.
	Frontier uint64
}

// maxHistoryBytes keeps a history answer under 90% of the 1 MiB payload
// limit.
const maxHistoryBytes = 900 << 10

// checkRead resolves the caller's ACL row and checks the channel against
// it: a channel outside it, or a lifecycle with none, is refused; a row
// that cannot be read is no refusal of the caller.
func (s *Service) checkRead(ctx context.Context, p wire.Principal, uid, channel string) *proto.Error {
	row, found, err := s.aclRow(ctx, p, uid)
	if err != nil {
		return unsettled("reading the read ACL: %v", err)
	}
	if !found {
		return proto.Refuse(proto.CodePermissionDenied, "no read ACL on record for %s (lifecycle %s is not provisioned for durable delivery)", p, uid)
	}
	if row.Ended() || s.life.isEnded(p, uid) {
		return proto.Refuse(proto.CodePermissionDenied, "lifecycle %s of %s has ended: it holds no channels any more", uid, p)
	}
	if !wire.Covered(row.AllowSubscribe, channel) {
		return proto.Refuse(proto.CodePermissionDenied, "channel %q is not within your read ACL [%s]", channel, strings.Join(row.AllowSubscribe, ", "))
	}
	return nil
}

// unsettled is a failure of the service itself (storage that did not
// answer), never a refusal of the caller: unavailable, and whether the
// operation stands is unknown (a write may have landed). A refusal that
// is unavailable and not executed means no delivery service answered.
func unsettled(format string, args ...any) *proto.Error {
	return &proto.Error{Code: proto.CodeUnavailable, Message: fmt.Sprintf(format, args...), Outcome: proto.Unknown}
}

// durableJoin gives a member lifecycle a durable hold on a channel, or on
// a `>` family. Its join cursor is the CHAT frontier now; posts between
// that cursor and what the fan-out has already passed are caught up by
// copying them here, so nothing published after the join is missed.
func (s *Service) durableJoin(ctx context.Context, p wire.Principal, uid, channel string) opReply {
	if err := wire.ValidateChannel(channel); err != nil {
		return opReply{Error: proto.Refuse(proto.CodeBadRequest, "%v", err)}
	}
	if !wire.IsConcrete(channel) && !isFamily(channel) {
		return opReply{Reason: fmt.Sprintf("%q is followed live only: a durable hold needs a channel or a family ending in .>", channel)}
	}
	if e := s.checkRead(ctx, p, uid, channel); e != nil {
		return opReply{Error: e}
	}
	cur, had := s.store.get(p, uid, channel)
	if had && !cur.Left() && cur.Activated {
		return opReply{Durable: true, Generation: cur.Generation, Frontier: cur.JoinCursor, Existing: true}
	}
	front, err := s.frontier(ctx)
	if err != nil {
		return opReply{Error: unsettled("reading the channel frontier: %v", err)}
	}
	m := Membership{Channel: channel, Owner: p.ID(), LifecycleUID: uid, State: StateActive, JoinCursor: front, Generation: cur.Generation + 1, rev: cur.rev}
	if had && !cur.Left() {
		// An activation that did not finish: keep its cursor and generation.
		m.JoinCursor, m.Generation = cur.JoinCursor, cur.Generation
	}
	m, err = s.store.put(ctx, m)
	if err != nil {
		return opReply{Error: unsettled("writing the membership: %v", err)}
	}
	fence, err := s.fence(ctx)
	if err != nil {
		return opReply{Error: unsettled("reading the fan-out's fence: %v", err)}
	}
	if err := s.catchUp(ctx, m, fence); err != nil {
		return s.abandonJoin(ctx, m, fence, "catch-up failed: "+err.Error())
	}
	evicted, err := s.catchUpEvicted(ctx, m.Channel, m.JoinCursor)
	if err != nil {
		return s.abandonJoin(ctx, m, fence, "could not check the catch-up window: "+err.Error())
	}
	if evicted {
		return s.abandonJoin(ctx, m, fence, "activation catch-up window partially evicted by retention")
	}
	m.Activated = true
	if m, err = s.store.put(ctx, m); err != nil {
		return opReply{Reason: "activation superseded by a concurrent leave or rejoin"}
	}
	return opReply{Durable: true, Generation: m.Generation, Frontier: m.JoinCursor}
}

func isFamily(ch string) bool {
	if !strings.HasSuffix(ch, ".>") {
		return false
	}
	return wire.IsConcrete(strings.TrimSuffix(ch, ".>"))
}

// fence is the highest CHAT sequence the fan-out may already have passed.
func (s *Service) fence(ctx context.Context) (uint64, error) {
	front, err := s.frontier(ctx)
	if err != nil {
		return 0, err
	}
	c, err := s.js.Consumer(ctx, wire.ChatStream(s.space), FanoutConsumer)
	if err != nil {
		return 0, err
	}
	info, err := c.Info(ctx)
	if err != nil {
		return 0, err
	}
	return max(front, info.Delivered.Stream), nil
}

// catchUp copies the posts in (JoinCursor, fence] that the membership
// covers into the member's inbox. The first copy that cannot be stored
// ends it with an error: a hold missing part of its window is not one.
func (s *Service) catchUp(ctx context.Context, m Membership, fence uint64) error {
	if fence <= m.JoinCursor {
		return nil
	}
	t := target{p: m.Principal(), uid: m.LifecycleUID, gen: m.Generation, reason: ReasonDurable}
	var werr error
	err := s.scanChannel(ctx, m.Channel, m.JoinCursor+1, time.Time{}, func(seq uint64, d wire.Delivery) bool {
		if seq > fence {
			return false
		}
		if d.Subject.Sender.ID() != m.Owner {
			e := Entry{Msg: d.Msg, Channel: d.Subject.Channel, Seq: seq, Reason: ReasonDurable, Generation: m.Generation}
			if err := s.writeEntry(ctx, t, e); err != nil {
				werr = fmt.Errorf("storing the copy of CHAT seq %d: %w", seq, err)
				return false
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	return werr
}

// catchUpEvicted reports whether retention may have dropped posts of the
// channel after cursor (spec §8 step 6): some sender's subject is at its
// per-subject cap and its oldest retained post is past cursor+1.
func (s *Service) catchUpEvicted(ctx context.Context, channel string, cursor uint64) (bool, error) {
	info, err := s.chat.Info(ctx, jetstream.WithSubjectFilter(wire.ChatFilter(s.space, channel)))
	if err != nil {
		return false, err
	}
	limit := info.Config.MaxMsgsPerSubject
	for subj, n := range info.State.Subjects {
		if limit <= 0 || int64(n) < limit {
			continue
		}
		first, err := s.chat.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(subj))
		if err != nil {
			return false, err
		}
		if first.Sequence > cursor+1 {
			return true, nil
		}
	}
	return false, nil
}

// abandonJoin ends an activation that cannot stand: the hold is
// tombstoned at fence (copies already stored up to it stay deliverable)
// and the member is told it is live only, and why.
func (s *Service) abandonJoin(ctx context.Context, m Membership, fence uint64, reason string) opReply {
	m.LeaveCursor, m.State = fence, StateLeft
	if _, err := s.store.put(ctx, m); err != nil {
		reason += "; ending the partial hold failed too: " + err.Error()
	}
	return opReply{Durable: false, Generation: m.Generation, Reason: reason}
}

// durableLeave ends a durable hold at the CHAT frontier: copies up to it
// stay deliverable, nothing after it is stored. A leave naming an older
// generation than the current hold is refused.
func (s *Service) durableLeave(ctx context.Context, p wire.Principal, uid, channel string, gen uint64) opReply {
	cur, had := s.store.get(p, uid, channel)
	if !had || cur.Left() {
		return opReply{AlreadyLeft: true}
	}
	if gen != 0 && gen != cur.Generation {
		return opReply{Error: proto.Refuse(proto.CodeFailedPrecondition, "stale generation %d: the hold on %q is at generation %d", gen, channel, cur.Generation)}
	}
	front, err := s.frontier(ctx)
	if err != nil {
		return opReply{Error: unsettled("reading the channel frontier: %v", err)}
	}
	cur.LeaveCursor, cur.State = front, StateLeft
	if _, err := s.store.put(ctx, cur); err != nil {
		return opReply{Error: unsettled("writing the membership: %v", err)}
	}
	return opReply{Generation: cur.Generation}
}

// readHistory returns the newest retained posts of a channel within the
// caller's read ACL, oldest first, bounded by count, time and size.
// The caller's read ACL is checked by the endpoint before this runs.
func (s *Service) readHistory(ctx context.Context, req mesh.HistoryArgs) opReply {
	if err := wire.ValidateConcreteChannel(req.Channel); err != nil {
		return opReply{Error: proto.Refuse(proto.CodeBadRequest, "%v", err)}
	}
	limit := req.Limit
	if limit <= 0 {
		limit = mesh.DefaultHistoryLimit
	}
	limit = min(limit, mesh.MaxHistoryLimit)
	var since time.Time
	if req.SinceMs > 0 {
		since = time.UnixMilli(req.SinceMs)
	}
	front, err := s.frontier(ctx)
	if err != nil {
		return opReply{Error: unsettled("reading the channel frontier: %v", err)}
	}
	upTo := front
	if req.UpToSeq > 0 {
		upTo = min(req.UpToSeq, front)
	}
	var items []mesh.HistoryItem
	complete := true
	err = s.scanChannel(ctx, req.Channel, 1, since, func(seq uint64, d wire.Delivery) bool {
		if seq > upTo {
			return false
		}
		items = append(items, mesh.HistoryItem{Seq: seq, Sender: d.Subject.Sender.ID(), Msg: d.Msg})
		if len(items) > limit {
			items, complete = items[1:], false
		}
		return true
	})
	if err != nil {
		return opReply{Error: unsettled("reading the history: %v", err)}
	}
	for size(items) > maxHistoryBytes && len(items) > 0 {
		items, complete = items[1:], false
	}
	return opReply{Items: items, Complete: complete, Frontier: front}
}

func size(items []mesh.HistoryItem) int {
	b, _ := json.Marshal(items)
	return len(b)
}

func (s *Service) scanChannel(ctx context.Context, channel string, fromSeq uint64, since time.Time, fn func(uint64, wire.Delivery) bool) error {
	return mesh.ScanChannel(ctx, s.js, s.space, channel, fromSeq, since, fn)
}
