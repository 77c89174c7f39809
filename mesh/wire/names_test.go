package wire_test

import (
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

func TestNames(t *testing.T) {
	const sp = "my.space" // sanitized to my_space everywhere
	tests := []struct{ name, got, want string }{
		{"chat stream", wire.ChatStream(sp), "CHAT_my_space"},
		{"dm stream", wire.DMStream(sp), "DM_my_space"},
		{"task stream", wire.TaskStream(sp), "TASK_my_space"},
		{"inbox stream", wire.InboxStream(sp), "INBOX_my_space"},
		{"dlv stream", wire.DlvStream(sp), "DLV_my_space"},
		{"epf stream", wire.EPFStream(sp), "EPF_my_space"},
		{"epe stream", wire.EPEStream(sp), "EPE_my_space"},
		{"epc stream", wire.EPCStream(sp), "EPC_my_space"},
		{"presence", wire.PresenceBucket(sp), "cotal_presence_my_space"},
		{"channels", wire.ChannelsBucket(sp), "cotal_channels_my_space"},
		{"members", wire.MembersBucket(sp), "cotal_members_my_space"},
		{"records", wire.RecordsBucket(sp), "cotal_records_my_space"},
		{"acl", wire.ACLBucket(sp), "cotal_acl_my_space"},
		{"delivery", wire.DeliveryBucket(sp), "cotal_delivery_my_space"},
		{"membership", wire.MembershipBucket(sp), "cotal_membership_my_space"},
		{"auth", wire.AuthBucket(sp), "cotal_auth_my_space"},
		{"dm consumer", wire.DMConsumer(alice, "uid1"), "dm_" + ownerA + "-alice-uid1"},
		{"dlv consumer", wire.DlvConsumer(alice, "uid1"), "dlv_" + ownerA + "-alice-uid1"},
		{"svc consumer", wire.SvcConsumer("Reviewer"), "svc_reviewer"},
		{"svc consumer sanitized", wire.SvcConsumer(" code.review "), "svc_code_review"},
		{"chat subjects", wire.ChatSubjects(sp), "cotal.my_space.chat.>"},
		{"dm subjects", wire.DMSubjects(sp), "cotal.my_space.inst.>"},
		{"task subjects", wire.TaskSubjects(sp), "cotal.my_space.svc.>"},
		{"inbox subjects", wire.InboxSubjects(sp), "cotal.my_space.dinbox.>"},
		{"dlv subjects", wire.DlvSubjects(sp), "cotal.my_space.dlv.>"},
		{"epf subjects", wire.EPFSubjects(sp), "cotal.my_space.epf.>"},
		{"epe subjects", wire.EPESubjects(sp), "cotal.my_space.epe.>"},
		{"epc subjects", wire.EPCSubjects(sp), "cotal.my_space.epc.>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

// TestStreamSubjectsCoverBuilders ties each builder to the stream that must capture it.
func TestStreamSubjectsCoverBuilders(t *testing.T) {
	chat, err := wire.ChatSubject("main", alice, "team.backend")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, filter, subject string }{
		{"chat", wire.ChatSubjects("main"), chat},
		{"chat filter", wire.ChatFilter("main", "team.*"), chat},
		{"dm", wire.DMSubjects("main"), wire.DMSubject("main", bob, alice)},
		{"dm filter", wire.DMFilter("main", bob), wire.DMSubject("main", bob, alice)},
		{"task", wire.TaskSubjects("main"), wire.SvcSubject("main", "r", alice)},
		{"svc filter", wire.SvcFilter("main", "r"), wire.SvcSubject("main", "R", alice)},
		{"inbox", wire.InboxSubjects("main"), wire.InboxSubject("main", alice, "u")},
		{"dlv", wire.DlvSubjects("main"), wire.DlvSubject("main", alice, "u")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Subjects match like channels: both are dotted tokens with * and >.
			if !wire.ChannelMatches(tt.filter, tt.subject) {
				t.Errorf("%q does not capture %q", tt.filter, tt.subject)
			}
		})
	}
}

func TestSvcConsumerRoleRoundTrips(t *testing.T) {
	for _, role := range []string{"reviewer", "Reviewer", "ops_1"} {
		got, ok := wire.SvcConsumerRole(wire.SvcConsumer(role))
		if !ok || got != strings.ToLower(role) {
			t.Errorf("SvcConsumerRole(SvcConsumer(%q)) = %q, %v", role, got, ok)
		}
	}
	if _, ok := wire.SvcConsumerRole("dm_local_x_uid"); ok {
		t.Error("a DM durable read as a role queue")
	}
}
