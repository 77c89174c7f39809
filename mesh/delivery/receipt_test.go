package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestReceiptsFollowADMToAMediatedReader: an agent's DM to another agent
// whose inbox the delivery service hosts is followed rung by rung: taken
// when the service's host holds it, then pulled and acked when the
// recipient's own read settles it. Nothing claims a rung early.
func TestReceiptsFollowADMToAMediatedReader(t *testing.T) {
	h := newHarness(t, false)
	carolPath, _ := h.mint(agent{name: "carol"})
	bob := h.poster("bob")
	w, err := bob.WatchReceipts()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := bob.DM(ctxT(t), "local.carol", "ping")
	if err != nil {
		t.Fatal(err)
	}
	// Nobody has read it: the receipt stays at stored.
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if p := w.Wait(short, r.ID, wire.RungTaken, 1, nil); p[0].Reached != wire.RungStored {
		t.Fatalf("before carol reads: %+v", p)
	}
	carol := h.connect(carolPath, mesh.Options{OneShot: true})
	got := collect(t, carol, 5*time.Second)
	if len(got) != 1 || got[0].Msg.Text() != "ping" {
		t.Fatalf("carol read %v", texts(got))
	}
	ctx, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	var seen []string
	p := w.Wait(ctx, r.ID, wire.RungAcked, 1, func(p mesh.Progress) { seen = append(seen, p.Latest) })
	if len(p) != 1 || p[0].Reached != wire.RungAcked || p[0].Injected || p[0].To != "local.carol" {
		t.Fatalf("after carol read it: %+v", p)
	}
	if want := []string{wire.RungTaken, wire.RungPulled, wire.RungAcked}; !equal(seen, want) {
		t.Fatalf("rungs in order %v, want %v", seen, want)
	}
}
