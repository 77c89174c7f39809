package wire

import "time"

// DeliveryCtlSubject is where a principal asks the space's delivery service
// for durable joins, leaves and history. The sender tokens pin it to the
// caller, as on every other rail.
func DeliveryCtlSubject(space string, p Principal) string {
	return Root(space) + ".ctl.delivery." + p.Owner + "." + p.Actor
}

// DeliveryCtlFilter is what the delivery service listens on.
func DeliveryCtlFilter(space string) string { return Root(space) + ".ctl.delivery.*.*" }

// DeliveryReplyPrefix is the only place a delivery answer may go: under the
// request's own subject, so the service never reflects an answer onto a
// subject the caller chose.
func DeliveryReplyPrefix(space string, p Principal) string {
	return DeliveryCtlSubject(space, p) + ".reply."
}

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
