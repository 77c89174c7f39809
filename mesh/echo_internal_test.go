package mesh

import (
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

// An echo of the operator's own send was delivered to no one here, so it
// never publishes a receipt (taken, pulled, acked would overclaim); the
// same DM arriving for this identity does.
func TestAnEchoPublishesNoReceipts(t *testing.T) {
	me := wire.Principal{Owner: "local", Actor: "root"}
	e := &Endpoint{space: "echo", me: me}
	it := &Item{Kind: wire.KindDM, Echo: true, Msg: wire.Message{ID: "m1"},
		Subject: wire.Subject{Kind: wire.KindDM, Sender: wire.Principal{Owner: "local", Actor: "alice"}, Recipient: me}}
	if e.noter(it) != nil {
		t.Error("an echo gets a receipt publisher")
	}
	it.Echo = false
	if e.noter(it) == nil {
		t.Error("control: a DM to this identity gets no receipt publisher")
	}
}
