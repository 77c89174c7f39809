package mesh

import (
	"context"
	"errors"
	"time"

	"github.com/cotal-go/cotal/mesh/wire"
)

// History limits of one readHistory answer.
const (
	DefaultHistoryLimit = 100
	MaxHistoryLimit     = 200
)

// ErrNoDeliveryService is returned when nobody answers for the space's
// durable delivery (open mode has none; a mesh may be starting).
var ErrNoDeliveryService = errors.New("durable delivery service unavailable")

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

// DeliveryReply is how the delivery service's operations report inside the
// service; the endpoint's commands answer with the narrower replies of
// agentsvc.go.
type DeliveryReply struct {
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

// Memberships lists this lifecycle's durable memberships.
func (e *Endpoint) Memberships(ctx context.Context) ([]MembershipInfo, error) {
	var r MembershipsReply
	err := e.call(ctx, CmdMemberships, struct{}{}, &r)
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
	a := HistoryArgs{Channel: channel, Limit: min(limit, MaxHistoryLimit)}
	if !since.IsZero() {
		a.SinceMs = since.UnixMilli()
	}
	var r HistoryReply
	err := e.call(ctx, CmdHistory, a, &r)
	return r.Items, r.Complete, err
}

// backfillTimeout bounds a join's history read: a slow service costs the
// joiner its backfill, never its join.
const backfillTimeout = 5 * time.Second
