package delivery_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// A durable join is refused as permission denied only when the channel is
// outside the caller's read ACL: when the service's own storage fails (here
// its CHAT stream is gone), the caller is told the service is unavailable
// and that the join may or may not stand, never that it lacks a right.
func TestJoinRefusedOnlyForWhatTheCallerLacks(t *testing.T) {
	h := newHarness(t, false)
	path, id := h.mint(agent{name: "joiner", subscribe: []string{"team"}, allowSub: []string{"team", "team.>"}})
	nc, err := nats.Connect(h.b.URL(), nats.UserCredentials(path), nats.CustomInboxPrefix(id.InboxPrefix()),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c, err := ep.NewClient(nc, ep.ClientOptions{Space: space, Caller: proto.Caller{Owner: id.Principal.Owner, Actor: id.Principal.Actor, UID: id.UID}})
	if err != nil {
		t.Fatal(err)
	}
	join := func(channel string) *proto.Error {
		t.Helper()
		_, err := c.Call(ctxT(t), wire.DeliveryEndpoint, wire.DeliveryJoin, mesh.JoinArgs{Channel: channel}, ep.Self(), ep.Timeout(10*time.Second))
		if err == nil {
			return nil
		}
		e := proto.AsError(err)
		if e == nil {
			t.Fatalf("join %s: %v is no refusal", channel, err)
		}
		return e
	}
	if e := join("team"); e != nil {
		t.Fatalf("join within the read ACL: %v", e)
	}
	if e := join("ops"); e == nil || e.Code != proto.CodePermissionDenied || e.EffectiveOutcome() != proto.NotExecuted {
		t.Fatalf("join outside the read ACL: %+v, want permission-denied, not executed", e)
	}
	if err := h.js.DeleteStream(ctxT(t), wire.ChatStream(space)); err != nil {
		t.Fatal(err)
	}
	e := join("team.x")
	if e == nil || e.Code == proto.CodePermissionDenied || e.Code != proto.CodeUnavailable || e.EffectiveOutcome() != proto.Unknown {
		t.Fatalf("join while the service's storage fails: %+v, want unavailable with an unknown outcome", e)
	}
}
