package mesh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Operations of the delivery service.
const (
	OpDurableJoin     = "durableJoin"
	OpDurableLeave    = "durableLeave"
	OpListMemberships = "listMemberships"
	OpReadHistory     = "readHistory"
)

// History limits of one readHistory answer.
const (
	DefaultHistoryLimit = 100
	MaxHistoryLimit     = 200
)

// ErrNoDeliveryService is returned when nobody answers for the space's
// durable delivery (open mode has none; a mesh may be starting).
var ErrNoDeliveryService = errors.New("durable delivery service unavailable")

// DeliveryRequest asks the space's delivery service for something on
// behalf of the principal in its subject.
type DeliveryRequest struct {
	Op           string      `json:"op"`
	From         wire.Sender `json:"from"`
	LifecycleUID string      `json:"lifecycleUid"`
	Channel      string      `json:"channel,omitempty"`
	Generation   uint64      `json:"generation,omitempty"`
	Limit        int         `json:"limit,omitempty"`
	UpToSeq      uint64      `json:"upToSeq,omitempty"` // history at or below this CHAT sequence
	SinceMs      int64       `json:"sinceMs,omitempty"` // history at or after this time
}

// MembershipInfo is one durable membership as its member sees it.
type MembershipInfo struct {
	Channel    string `json:"channel"`
	Generation uint64 `json:"generation"`
	Activated  bool   `json:"activated"`
	JoinCursor uint64 `json:"joinCursor"`
}

// HistoryItem is one retained post.
type HistoryItem struct {
	Seq uint64       `json:"seq"`
	Msg wire.Message `json:"msg"`
}

// DeliveryReply is the service's answer.
type DeliveryReply struct {
	OK          bool             `json:"ok"`
	Error       string           `json:"error,omitempty"`
	Durable     bool             `json:"durable,omitempty"`
	Generation  uint64           `json:"generation,omitempty"`
	Reason      string           `json:"reason,omitempty"`
	Existing    bool             `json:"existing,omitempty"` // the hold was already active: a reconnect, not a join
	AlreadyLeft bool             `json:"alreadyLeft,omitempty"`
	Memberships []MembershipInfo `json:"memberships,omitempty"`
	Items       []HistoryItem    `json:"items,omitempty"`
	Complete    bool             `json:"complete,omitempty"`
	// Frontier is the CHAT sequence the answer stands at: the join
	// cursor of a durable hold, or the last sequence a history read saw.
	Frontier uint64 `json:"frontier,omitempty"`
}

// deliveryCall sends one request to the delivery service and waits for
// its answer on a reply subject under the request's own.
func (e *Endpoint) deliveryCall(ctx context.Context, req DeliveryRequest) (DeliveryReply, error) {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	req.From = wire.Sender{ID: e.me.ID(), Name: e.card.Name, Role: e.role}
	req.LifecycleUID = e.uid
	body, err := json.Marshal(req)
	if err != nil {
		return DeliveryReply{}, err
	}
	reply := wire.DeliveryReplyPrefix(e.space, e.me) + wire.NewLifecycleUID()
	sub, err := e.nc.SubscribeSync(reply)
	if err != nil {
		return DeliveryReply{}, err
	}
	defer sub.Unsubscribe()
	msg := nats.NewMsg(wire.DeliveryCtlSubject(e.space, e.me))
	msg.Reply, msg.Data = reply, body
	if err := e.nc.PublishMsg(msg); err != nil {
		return DeliveryReply{}, err
	}
	m, err := sub.NextMsgWithContext(ctx)
	if err != nil {
		return DeliveryReply{}, fmt.Errorf("%w: %s got no answer (%v)", ErrNoDeliveryService, req.Op, err)
	}
	if m.Header.Get("Status") == "503" {
		return DeliveryReply{}, fmt.Errorf("%w: nobody serves durable delivery in space %s", ErrNoDeliveryService, e.space)
	}
	var r DeliveryReply
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return DeliveryReply{}, fmt.Errorf("delivery service answered %s with garbage: %w", req.Op, err)
	}
	if !r.OK {
		return r, errors.New(r.Error)
	}
	return r, nil
}

// Memberships lists this lifecycle's durable memberships.
func (e *Endpoint) Memberships(ctx context.Context) ([]MembershipInfo, error) {
	r, err := e.deliveryCall(ctx, DeliveryRequest{Op: OpListMemberships})
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
	if e.profile == "open" || e.profile == "operator" {
		return e.readHistoryDirect(ctx, channel, limit, since)
	}
	req := DeliveryRequest{Op: OpReadHistory, Channel: channel, Limit: limit}
	if !since.IsZero() {
		req.SinceMs = since.UnixMilli()
	}
	r, err := e.deliveryCall(ctx, req)
	return r.Items, r.Complete, err
}

// backfillTimeout bounds a join's history read: a slow service costs the
// joiner its backfill, never its join.
const backfillTimeout = 5 * time.Second
