package mesh

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// ScanChannel reads a channel's (or a family's) valid retained posts in
// stream order, from a CHAT sequence or from a time, until fn returns
// false or the retained history ends. It needs the right to create an
// ordered consumer on CHAT: the delivery service and the operator have
// it, agents read history through the service.
func ScanChannel(ctx context.Context, js jetstream.JetStream, space, channel string, fromSeq uint64, since time.Time, fn func(seq uint64, d wire.Delivery) bool) error {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{wire.ChatFilter(space, channel)}}
	if !since.IsZero() {
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	} else {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, max(fromSeq, 1)
	}
	cons, err := js.OrderedConsumer(ctx, wire.ChatStream(space), cfg)
	if err != nil {
		return err
	}
	for {
		batch, err := cons.FetchNoWait(256)
		if err != nil {
			return err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			meta, err := m.Metadata()
			if err != nil {
				continue
			}
			if d, reject, _ := wire.Decode(m.Subject(), m.Data()); reject == "" {
				if !fn(meta.Sequence.Stream, d) {
					return nil
				}
			}
			if meta.NumPending == 0 {
				return nil
			}
		}
		if n == 0 {
			if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
				return err
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// readHistoryDirect is History for an identity that may read CHAT itself
// (open mode, the operator): the newest limit posts, oldest first.
func (e *Endpoint) readHistoryDirect(ctx context.Context, channel string, limit int, since time.Time) ([]HistoryItem, bool, error) {
	var items []HistoryItem
	complete := true
	err := ScanChannel(ctx, e.js, e.space, channel, 1, since, func(seq uint64, d wire.Delivery) bool {
		items = append(items, HistoryItem{Seq: seq, Sender: d.Subject.Sender.ID(), Msg: d.Msg})
		if len(items) > limit {
			items, complete = items[1:], false
		}
		return true
	})
	return items, complete, err
}

// Memberships lists this lifecycle's durable memberships.
func (e *Endpoint) Memberships(ctx context.Context) ([]MembershipInfo, error) {
	var r MembershipsReply
	err := e.call(ctx, wire.DeliveryMemberships, struct{}{}, &r)
	return r.Memberships, err
}

// History reads up to limit retained posts of a channel within the read
// ACL, oldest first, through the delivery service (agents have no raw
// access to the CHAT stream).
func (e *Endpoint) History(ctx context.Context, channel string, limit int) ([]HistoryItem, bool, error) {
	if err := wire.ValidateConcreteChannel(channel); err != nil {
		return nil, false, err
	}
	return e.history(ctx, channel, limit, time.Time{})
}

func (e *Endpoint) history(ctx context.Context, channel string, limit int, since time.Time) ([]HistoryItem, bool, error) {
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	if e.profile.ReadsStorage() {
		return e.readHistoryDirect(ctx, channel, limit, since)
	}
	a := HistoryArgs{Channel: channel, Limit: min(limit, MaxHistoryLimit)}
	if !since.IsZero() {
		a.SinceMs = since.UnixMilli()
	}
	var r HistoryReply
	err := e.call(ctx, wire.DeliveryHistory, a, &r)
	return r.Items, r.Complete, err
}

// backfillTimeout bounds a join's history read: a slow service costs the
// joiner its backfill, never its join.
const backfillTimeout = 5 * time.Second

// ReadHistory is History for a person at the CLI: a channel outside the
// read ACL, or one the delivery endpoint refuses, is "not allowed to read
// #channel" with the reason.
func (e *Endpoint) ReadHistory(ctx context.Context, channel string, limit int) ([]HistoryItem, bool, error) {
	if acl := e.AllowSubscribe(); !acl.Covers(channel) {
		list := "(none)"
		if len(acl) > 0 {
			list = strings.Join(acl, ", ")
		}
		return nil, false, fmt.Errorf("not allowed to read #%s: it is outside your read ACL (%s)", channel, list)
	}
	items, complete, err := e.History(ctx, channel, limit)
	if ee := proto.AsError(err); ee != nil && ee.Code == proto.CodePermissionDenied {
		return nil, false, fmt.Errorf("not allowed to read #%s: %s", channel, ee.Message)
	}
	return items, complete, err
}
