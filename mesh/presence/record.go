package presence

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Timing of the presence plane (spec §5). The bucket's TTL is the liveness
// window; the broker provisions it to the same value.
const (
	Heartbeat  = 2 * time.Second
	TTL        = 6 * time.Second
	SweepEvery = 2 * time.Second
)

// ProtocolVersion is the card's protocolVersion (required from v0.4).
const ProtocolVersion = "0.4"

// MaxNameLength bounds card.name (spec MAX_NAME_LENGTH).
const MaxNameLength = 128

// Status is a peer's presence state. A live client writes idle, waiting or
// working; offline is derived by observers or written once on graceful stop.
type Status string

const (
	Idle    Status = "idle"    // free for work
	Waiting Status = "waiting" // blocked on input, approval or a peer
	Working Status = "working" // in a turn: a liveness claim, not progress
	Offline Status = "offline" // gone or heartbeat lapsed
)

// ParseStatus accepts the statuses a live client may set; offline is
// refused because only a graceful Close may write it.
func ParseStatus(s string) (Status, error) {
	switch st := Status(s); st {
	case Idle, Waiting, Working:
		return st, nil
	case Offline:
		return "", fmt.Errorf("%w: a live client never sets offline; close the writer instead", ErrInvalidStatus)
	default:
		return "", fmt.Errorf("%w: %q is not idle, waiting or working", ErrInvalidStatus, s)
	}
}

// Attention is how willing a peer is to be interrupted.
type Attention string

const (
	Open  Attention = "open"
	DND   Attention = "dnd"
	Focus Attention = "focus"
)

// ParseAttention accepts open, dnd and focus.
func ParseAttention(s string) (Attention, error) {
	switch a := Attention(s); a {
	case Open, DND, Focus:
		return a, nil
	default:
		return "", fmt.Errorf("%w: %q is not open, dnd or focus", ErrInvalidAttention, s)
	}
}

// Card kinds.
const (
	KindAgent    = "agent"
	KindEndpoint = "endpoint"
)

// MetaManager is the card meta key a seat's connector names its hosting
// manager instance under: where calls about the seat go.
const MetaManager = "ai.cotal.manager"

// Card is the AgentCard a peer publishes inside its presence record.
// Skills are not carried.
type Card struct {
	ID              string            `json:"id"` // dot-form owner.actor, also the KV key
	Name            string            `json:"name"`
	Kind            string            `json:"kind,omitempty"`
	Owner           string            `json:"owner,omitempty"`
	Actor           string            `json:"actor,omitempty"`
	Role            string            `json:"role,omitempty"`
	Description     string            `json:"description,omitempty"`
	Tags            []string          `json:"tags,omitempty"`
	Meta            map[string]string `json:"meta,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
}

// Condition says why a peer is not making progress (rate_limit, auth,
// approval, ...). Since is epoch ms.
type Condition struct {
	Code    string `json:"code"`
	Source  string `json:"source,omitempty"`
	Message string `json:"message,omitempty"`
	Since   int64  `json:"since,omitempty"`
}

// Record is one presence value as stored under card.id. Times are epoch ms
// on the publisher's clock.
type Record struct {
	Card          Card              `json:"card"`
	Status        Status            `json:"status"`
	TS            int64             `json:"ts"` // last heartbeat
	LifecycleUID  string            `json:"lifecycleUid,omitempty"`
	Activity      string            `json:"activity,omitempty"`
	ActivitySince int64             `json:"activitySince,omitempty"`
	StatusSince   int64             `json:"statusSince,omitempty"`
	ActiveAt      int64             `json:"activeAt,omitempty"` // last time the status became working
	Condition     *Condition        `json:"condition,omitempty"`
	Environment   json.RawMessage   `json:"environment,omitempty"` // opaque, passed through
	Attention     Attention         `json:"attention,omitempty"`
	ChannelModes  map[string]string `json:"channelModes,omitempty"` // concrete channel -> quiet|muted
}

// clone returns a record sharing no maps, slices or pointers with r.
func (r Record) clone() Record {
	r.Card.Tags = slices.Clone(r.Card.Tags)
	r.Card.Meta = maps.Clone(r.Card.Meta)
	r.ChannelModes = maps.Clone(r.ChannelModes)
	r.Environment = slices.Clone(r.Environment)
	if r.Condition != nil {
		c := *r.Condition
		r.Condition = &c
	}
	return r
}

// msTime turns an epoch-ms field into a time, zero staying zero.
func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
