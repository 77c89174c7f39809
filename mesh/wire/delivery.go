package wire

import "time"

// DeliveryEndpoint is the control-surface endpoint of the space's delivery
// service, through which an agent reads everything stored for it.
const DeliveryEndpoint = "delivery"

// The delivery endpoint's commands, each served in self mode only.
const (
	DeliveryJoin        = "join"        // a durable hold on a channel
	DeliveryLeave       = "leave"       // end a durable hold
	DeliveryMemberships = "memberships" // the caller's holds
	DeliveryHistory     = "history"     // retained posts within the read ACL
	DeliveryRoster      = "roster"      // the presence roster and its view
	DeliveryChannels    = "channels"    // the channel registry
	DeliveryLookup      = "lookup"      // identities of the space by name or id
	DeliveryTake        = "take"        // stored DMs, tasks and channel copies
	DeliverySettle      = "settle"      // ack or release what take handed out
	DeliveryPresence    = "presence"    // write the caller's presence (and heartbeat)
	DeliveryMentions    = "mentions"    // which @mentions of a post get a stored copy
	DeliveryStored      = "stored"      // whether a message id of the caller's is stored already
)

// DeliveryCommands is every command of the delivery endpoint: an agent is
// granted one self-mode request row for each.
var DeliveryCommands = []string{DeliveryJoin, DeliveryLeave, DeliveryMemberships, DeliveryHistory, DeliveryRoster,
	DeliveryChannels, DeliveryLookup, DeliveryTake, DeliverySettle, DeliveryPresence, DeliveryMentions, DeliveryStored}

// ObserverDeliveryCommands are the reads an observer may make: the roster,
// the registry, identities and history, never an inbox or a presence.
var ObserverDeliveryCommands = []string{DeliveryRoster, DeliveryChannels, DeliveryLookup, DeliveryHistory}

// ACLRow is a lifecycle's read ACL as the space issued it, kept in the ACL
// bucket under ACLKey. The delivery service re-reads it for every stored
// copy, so a narrowed ACL stops copies at once.
type ACLRow struct {
	Principal            string    `json:"principal"`
	LifecycleUID         string    `json:"lifecycleUid"`
	AllowSubscribe       []string  `json:"allowSubscribe"`
	IssuedAllowSubscribe []string  `json:"issuedAllowSubscribe"`
	Revision             uint64    `json:"revision"`
	UpdatedAt            time.Time `json:"updatedAt"`
	// EndedAt is when the lifecycle ended (stop, despawn, revocation):
	// an ended row grants nothing and is never provisioned again.
	EndedAt time.Time `json:"endedAt,omitzero"`
}

// Ended reports whether the row's lifecycle has ended.
func (r ACLRow) Ended() bool { return !r.EndedAt.IsZero() }

// ACLKey is the ACL-bucket key of one lifecycle.
func ACLKey(p Principal, uid string) string { return p.Owner + "." + p.Actor + "." + uid }
