package mesh

import (
	"encoding/json"
	"errors"

	"github.com/cotal-go/cotal/mesh/wire"
)

// The wire types of the delivery endpoint (wire.DeliveryEndpoint), whose
// commands are named in mesh/wire, where the broker grants them: this
// package calls them, mesh/delivery serves them. Everything an agent reads
// from storage (its DMs, tasks and stored channel copies, history,
// presence, the channel registry and the identity records) it reads
// through these self-mode commands: the broker pins the caller's owner,
// actor and lifecycle uid in the request subject and the answer goes only
// to the caller's own reply rail. An agent credential has no JetStream
// API right at all (DESIGN: a reply subject is the requester's to choose).

// JoinArgs asks for a durable hold.
type JoinArgs struct {
	Channel string `json:"channel" schema:"minLength=1,maxLength=4096"`
}

// JoinReply says how a durable hold stands.
type JoinReply struct {
	Durable    bool   `json:"durable"`
	Generation uint64 `json:"generation,omitempty"`
	Frontier   uint64 `json:"frontier,omitempty"` // the hold's join cursor
	Existing   bool   `json:"existing,omitempty"` // already active: a reconnect, not a join
	Reason     string `json:"reason,omitempty"`   // why it is live only
}

// LeaveArgs ends a durable hold; a generation other than the current one is refused.
type LeaveArgs struct {
	Channel    string `json:"channel" schema:"minLength=1,maxLength=4096"`
	Generation uint64 `json:"generation,omitempty"`
}

// LeaveReply says how the leave went.
type LeaveReply struct {
	AlreadyLeft bool   `json:"alreadyLeft,omitempty"`
	Generation  uint64 `json:"generation,omitempty"`
}

// MembershipsReply lists the caller's open holds.
type MembershipsReply struct {
	Memberships []MembershipInfo `json:"memberships"`
}

// HistoryArgs asks for retained posts of one channel.
type HistoryArgs struct {
	Channel string `json:"channel" schema:"minLength=1,maxLength=4096"`
	Limit   int    `json:"limit,omitempty" schema:"minimum=0,maximum=200"`
	SinceMs int64  `json:"sinceMs,omitempty" schema:"minimum=0"`
	UpToSeq uint64 `json:"upToSeq,omitempty"`
}

// HistoryReply is the newest retained posts, oldest first.
type HistoryReply struct {
	Items    []HistoryItem `json:"items"`
	Complete bool          `json:"complete"`
	Frontier uint64        `json:"frontier"` // the CHAT sequence the read stood at
}

// RosterPeer is one roster row on the wire; times are the service's
// clock in epoch ms, read against RosterReply.NowMs.
type RosterPeer struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Role          string          `json:"role,omitempty"`
	Record        json.RawMessage `json:"record"`
	Status        string          `json:"status"`
	Offline       bool            `json:"offline,omitempty"`
	OfflineReason string          `json:"offlineReason,omitempty"`
	LastHeardMs   int64           `json:"lastHeardMs,omitempty"`
	HeartbeatMs   int64           `json:"heartbeatMs,omitempty"`
	StatusSinceMs int64           `json:"statusSinceMs,omitempty"`
	Known         bool            `json:"known,omitempty"`
}

// RosterReply is the service's roster and the state of its view.
type RosterReply struct {
	Peers          []RosterPeer `json:"peers"`
	View           string       `json:"view"`
	StaleSinceMs   int64        `json:"staleSinceMs,omitempty"`
	LastDeliveryMs int64        `json:"lastDeliveryMs,omitempty"`
	NowMs          int64        `json:"nowMs"`
}

// ChannelsArgs reads one registry entry, or with no channel every entry.
type ChannelsArgs struct {
	Channel string `json:"channel,omitempty" schema:"maxLength=4096"`
}

// ChannelsReply is the registry as the service read it.
type ChannelsReply struct {
	Defaults *ChannelConfig           `json:"defaults,omitempty"`
	Channels map[string]ChannelConfig `json:"channels"`
}

// LookupArgs names identities by display name or by id (owner.actor).
type LookupArgs struct {
	Names []string `json:"names" schema:"minItems=1,maxItems=64"`
}

// IdentityInfo is what the space's records say of one name.
type IdentityInfo struct {
	Query   string       `json:"query"`
	Found   bool         `json:"found"`
	ID      string       `json:"id,omitempty"`
	Name    string       `json:"name,omitempty"`
	Role    string       `json:"role,omitempty"`
	Profile wire.Profile `json:"profile,omitempty"`
}

// LookupReply answers each name in order.
type LookupReply struct {
	Identities []IdentityInfo `json:"identities"`
}

// TakeArgs takes what storage holds for the caller: at most Max items,
// waiting up to WaitMs for the first. Taken items are the caller's until
// it settles them; unsettled ones come back after the ack wait.
type TakeArgs struct {
	Max    int   `json:"max,omitempty" schema:"minimum=0,maximum=200"`
	WaitMs int64 `json:"waitMs,omitempty" schema:"minimum=0,maximum=25000"`
	// Session names one long-lived reader (a process that heartbeats);
	// once that session has said offline, its late takes are refused so
	// nothing is handed to a reader that is gone.
	Session string `json:"session,omitempty" schema:"maxLength=64"`
}

// TakenItem is one stored item handed to its recipient.
type TakenItem struct {
	Key        string       `json:"key"`
	Kind       wire.Kind    `json:"kind"`
	Subject    string       `json:"subject"` // the subject it was published on
	Msg        wire.Message `json:"msg"`
	Historical bool         `json:"historical,omitempty"`
	Stream     string       `json:"stream,omitempty"` // with Seq, the stored message it came from
	Seq        uint64       `json:"seq,omitempty"`
}

// TakeReply carries the items and what the service refused on the way.
type TakeReply struct {
	Items    []TakenItem    `json:"items"`
	Rejected map[string]int `json:"rejected,omitempty"`
}

// SettleArgs acks (or, with Release, gives back for redelivery) taken items.
type SettleArgs struct {
	Keys    []string `json:"keys" schema:"minItems=1,maxItems=200"`
	Release bool     `json:"release,omitempty"`
}

// SettleReply counts the keys settled; unknown keys (expired, already
// settled) are not an error.
type SettleReply struct {
	Settled int `json:"settled"`
}

// PresenceArgs writes the caller's presence record: every call is a
// heartbeat; Offline writes the final offline record and stops.
type PresenceArgs struct {
	Status      string   `json:"status,omitempty" schema:"enum=idle|waiting|working"`
	Activity    *string  `json:"activity,omitempty" schema:"maxLength=200"`
	Attention   string   `json:"attention,omitempty" schema:"enum=open|dnd|focus"`
	Kind        string   `json:"kind,omitempty" schema:"enum=agent|endpoint"`
	Description string   `json:"description,omitempty" schema:"maxLength=200"`
	Tags        []string `json:"tags,omitempty" schema:"maxItems=32"`
	Offline     bool     `json:"offline,omitempty"`
	Session     string   `json:"session,omitempty" schema:"maxLength=64"` // the heartbeating reader (see TakeArgs)
}

// PresenceReply is the record as written.
type PresenceReply struct {
	Status    string `json:"status"`
	Activity  string `json:"activity,omitempty"`
	Attention string `json:"attention,omitempty"`
}

// MentionsArgs asks which @mentions of a post by the caller to a channel
// get a stored copy.
type MentionsArgs struct {
	Channel string   `json:"channel" schema:"minLength=1,maxLength=4096"`
	Names   []string `json:"names" schema:"minItems=1,maxItems=64"`
}

// StoredArgs asks whether the newest message on one of the caller's own
// chat, inst or svc subjects carries a message id: how a send again with
// an id the mesh stored already learns it (the streams acknowledge nothing,
// and store a duplicate id once).
type StoredArgs struct {
	Subject string `json:"subject" schema:"minLength=1,maxLength=4096"`
	ID      string `json:"id" schema:"minLength=1,maxLength=64"`
}

// StoredReply says where the message is stored, when it is.
type StoredReply struct {
	Found  bool   `json:"found"`
	Stream string `json:"stream,omitempty"`
	Seq    uint64 `json:"seq,omitempty"`
}

// MentionCopy says whether a mention gets a stored copy: on a live channel
// only a mentioned identity whose read ACL covers it does (a durable
// channel's members hold copies through their memberships). It says no
// more of another identity than that.
type MentionCopy struct {
	Name   string `json:"name"`
	Stored bool   `json:"stored"`
}

// MentionsReply answers each mention in order.
type MentionsReply struct {
	Mentions []MentionCopy `json:"mentions"`
}

// History limits of one history answer.
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
	Seq    uint64       `json:"seq"`
	Sender string       `json:"sender"` // the subject's sender, dot-form: who really posted it
	Msg    wire.Message `json:"msg"`
}

// SenderPrincipal is the item's sender as a principal; the zero value
// when the reader left it out.
func (h HistoryItem) SenderPrincipal() wire.Principal {
	p, _ := wire.ParsePrincipal(h.Sender)
	return p
}
