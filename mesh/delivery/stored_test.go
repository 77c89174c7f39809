package delivery_test

import (
	"errors"
	"testing"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestAnAgentsResendOfAStoredIDIsTheDuplicate: the streams acknowledge
// nothing and store an id once, so a send again with the id of a stored
// message hears no stored notice; the agent learns from the delivery
// service that its own subject holds it, and nobody may ask about
// another's subject.
func TestAnAgentsResendOfAStoredIDIsTheDuplicate(t *testing.T) {
	h := newHarness(t, false)
	alicePath, _ := h.mint(agent{name: "alice"})
	a := h.connect(alicePath, mesh.Options{OneShot: true, Subscribe: []string{}})
	first, err := a.Send(ctxT(t), "team", "once", mesh.WithID("resend-1"))
	if err != nil || first.Duplicate {
		t.Fatalf("the first send: %+v %v", first, err)
	}
	again, err := a.Send(ctxT(t), "team", "once", mesh.WithID("resend-1"))
	if err != nil || !again.Duplicate || again.Seq != first.Seq || again.Stream != first.Stream {
		t.Fatalf("the send again: %+v %v; want the duplicate of %+v", again, err, first)
	}
	_, mallory := h.mint(agent{name: "mallory"})
	nc, err := h.b.Connect("mallory's calls")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c, err := ep.NewClient(nc, ep.ClientOptions{Space: space, Caller: proto.Caller{Owner: mallory.Principal.Owner, Actor: mallory.Principal.Actor, UID: mallory.UID}, SharedConn: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Call(ctxT(t), wire.DeliveryEndpoint, wire.DeliveryStored, mesh.StoredArgs{Subject: first.Subject, ID: "resend-1"}, ep.Self())
	var e *proto.Error
	if !errors.As(err, &e) || e.Code != proto.CodePermissionDenied {
		t.Fatalf("mallory asking about alice's subject %s: %v, want permission-denied", first.Subject, err)
	}
}
