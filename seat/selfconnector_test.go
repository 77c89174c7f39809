package seat_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat"
)

// Every command the manager serves in self mode is one an agent's
// credential may call: a self command missing from the credential's grants
// is dropped by the broker and its caller waits out its deadline.
func TestEverySelfCommandIsGranted(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	d, err := h.c.Describe(ctxT(t), seat.Endpoint, h.iid)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range d.Commands {
		if !slices.Contains(c.Modes, ep.ModeSelf) {
			continue
		}
		n++
		if !slices.Contains(broker.SelfCommands, c.Name) {
			t.Errorf("the manager serves %s in self mode, but broker.SelfCommands %v does not grant it", c.Name, broker.SelfCommands)
		}
	}
	for _, want := range []string{seat.CmdConnector, seat.CmdInboxWindow, seat.CmdAttention, seat.CmdChannelMode} {
		if _, ok := d.Command(want); !ok {
			t.Errorf("the manager does not serve %s", want)
		}
	}
	if n == 0 {
		t.Fatal("the manager serves no self command")
	}
}
