package mesh

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/internal/violation"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Spec §16 item 28: a broker refusal of a chat subscription that arrives
// after the join was confirmed removes the channel from the joined set.
// The refusal is fed through the connection's error handler exactly as
// nats.go delivers it.
func TestConformance28_LateRefusalLeavesTheChannel(t *testing.T) {
	e := &Endpoint{space: "s", me: wire.Principal{Owner: "local", Actor: "a"}, perms: violation.New(), inbox: newInbox()}
	sub := &nats.Subscription{}
	subject := wire.ChatFilter("s", "team")
	e.joined = []*joinedChannel{{channel: "team", subject: subject, sub: sub}, {channel: "ops", subject: wire.ChatFilter("s", "ops"), sub: &nats.Subscription{}}}
	refusal := fmt.Errorf("%w: Permissions Violation for Subscription to %q", nats.ErrPermissionViolation, subject)
	e.onAsyncError(nil, nil, refusal)
	if got := e.Channels(); len(got) != 1 || got[0] != "ops" {
		t.Fatalf("joined after a late refusal of #team: %v", got)
	}
	if err := e.perms.Since(subject, "subscription", time.Now().Add(-time.Minute)); err == nil {
		t.Fatal("the refusal was not recorded")
	}
}
