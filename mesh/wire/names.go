package wire

import (
	"strings"
	"time"
)

// streamName and bucketName pass the space through SanitizeToken because JetStream names allow no dots or spaces.
func streamName(prefix, space string) string { return prefix + "_" + SanitizeToken(space) }
func bucketName(what, space string) string   { return "cotal_" + what + "_" + SanitizeToken(space) }

// ChatStream stores channel posts (chat subjects) for history and durable delivery.
func ChatStream(space string) string { return streamName("CHAT", space) }

// DMStream stores unicast messages until the recipient's consumer acks them.
func DMStream(space string) string { return streamName("DM", space) }

// TaskStream is the anycast work queue shared by the holders of each role.
func TaskStream(space string) string { return streamName("TASK", space) }

// InboxStream holds the delivery daemon's backstop inbox copies.
func InboxStream(space string) string { return streamName("INBOX", space) }

// DlvStream holds the per-member copies the delivery daemon hands out.
func DlvStream(space string) string { return streamName("DLV", space) }

// EPFStream holds endpoint facts, written create-only.
func EPFStream(space string) string { return streamName("EPF", space) }

// EPEStream holds endpoint events and progress.
func EPEStream(space string) string { return streamName("EPE", space) }

// EPCStream holds content-addressed endpoint contracts.
func EPCStream(space string) string { return streamName("EPC", space) }

// PresenceBucket holds one heartbeat record per principal, expiring after the liveness window.
func PresenceBucket(space string) string { return bucketName("presence", space) }

// ChannelsBucket is the channel registry and its defaults.
func ChannelsBucket(space string) string { return bucketName("channels", space) }

// MembersBucket holds durable channel membership.
func MembersBucket(space string) string { return bucketName("members", space) }

// RecordsBucket holds endpoint spec and status records.
func RecordsBucket(space string) string { return bucketName("records", space) }

// ACLBucket holds each lifecycle's read ACL for the delivery daemon.
func ACLBucket(space string) string { return bucketName("acl", space) }

// DeliveryBucket holds the delivery daemon's lease.
func DeliveryBucket(space string) string { return bucketName("delivery", space) }

// MembershipBucket holds the display-only membership feed.
func MembershipBucket(space string) string { return bucketName("membership", space) }

// AuthBucket holds auth state that must never be read by Direct Get.
func AuthBucket(space string) string { return bucketName("auth", space) }

// DMConsumer is one lifecycle's durable on the DM stream, in dash-form because consumer names forbid dots.
func DMConsumer(p Principal, uid string) string { return "dm_" + p.Dash() + "-" + uid }

// DlvConsumer is one lifecycle's bind-only durable on the DLV stream.
func DlvConsumer(p Principal, uid string) string { return "dlv_" + p.Dash() + "-" + uid }

// SvcConsumer is a role's shared durable on the TASK stream; every holder of the role pulls from it.
func SvcConsumer(role string) string { return svcPrefix + roleToken(role) }

// SvcConsumerRole is the role whose queue a SvcConsumer name is.
func SvcConsumerRole(name string) (string, bool) { return strings.CutPrefix(name, svcPrefix) }

const svcPrefix = "svc_"

// subjectsUnder is one stream's subject list: everything under one kind token of the space root.
func subjectsUnder(space, kind string) string { return Root(space) + "." + kind + ".>" }

// ChatSubjects is the CHAT stream's subject list.
func ChatSubjects(space string) string { return subjectsUnder(space, "chat") }

// DMSubjects is the DM stream's subject list.
func DMSubjects(space string) string { return subjectsUnder(space, "inst") }

// TaskSubjects is the TASK stream's subject list.
func TaskSubjects(space string) string { return subjectsUnder(space, "svc") }

// InboxSubjects is the INBOX stream's subject list.
func InboxSubjects(space string) string { return subjectsUnder(space, "dinbox") }

// DlvSubjects is the DLV stream's subject list.
func DlvSubjects(space string) string { return subjectsUnder(space, "dlv") }

// EPFSubjects is the EPF stream's subject list.
func EPFSubjects(space string) string { return subjectsUnder(space, "epf") }

// EPESubjects is the EPE stream's subject list.
func EPESubjects(space string) string { return subjectsUnder(space, "epe") }

// EPCSubjects is the EPC stream's subject list.
func EPCSubjects(space string) string { return subjectsUnder(space, "epc") }

// IdentityKey is the records-bucket key of a principal's identity row:
// the space's registry of minted identities, which lets a sender reach one
// that has never connected.
func IdentityKey(p Principal) string { return "identity." + p.Owner + "." + p.Actor + ".spec" }

// IdentityRecord is the space's registry row of a minted identity, kept in
// the records bucket under IdentityKey. Its LifecycleUID is the one current
// lifecycle of the principal: a caller naming another uid is not live.
type IdentityRecord struct {
	ID             string    `json:"id"` // principal dot-form
	Name           string    `json:"name"`
	Role           string    `json:"role,omitempty"`
	Profile        Profile   `json:"profile"` // agent, observer or operator
	LifecycleUID   string    `json:"lifecycleUid"`
	Subscribe      []string  `json:"subscribe"`
	AllowSubscribe []string  `json:"allowSubscribe"`
	AllowPublish   []string  `json:"allowPublish"`
	Capabilities   []string  `json:"capabilities,omitempty"`
	MintedAt       time.Time `json:"mintedAt"`
	Retired        bool      `json:"retired,omitempty"`
	HostedBy       string    `json:"hostedBy,omitempty"` // the manager whose seat connector holds it
}

// Current reports whether the record names uid as the principal's live
// lifecycle.
func (r IdentityRecord) Current(uid string) bool { return !r.Retired && r.LifecycleUID == uid }

// Can reports whether the identity was minted with a capability.
func (r IdentityRecord) Can(capability string) bool {
	for _, c := range r.Capabilities {
		if c == capability {
			return true
		}
	}
	return false
}
