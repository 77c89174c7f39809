package seat

import (
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

// TestDMResumeFrom: a resumed seat's inbox, should its consumer be gone
// (an open mesh's expire unread), is made again after what it had
// acknowledged at the cut, else after the DM stream's last sequence then.
func TestDMResumeFrom(t *testing.T) {
	const space = "s"
	inv := &Inventory{Streams: map[string]uint64{wire.DMStream(space): 12}}
	acked := PreservedSeat{Cut: []ConsumerCut{{Stream: wire.DlvStream(space), AckFloor: 40}, {Stream: wire.DMStream(space), AckFloor: 7}}}
	if got := dmResumeFrom(inv, acked, space); got != 8 {
		t.Errorf("with its DM consumer's cut: %d, want 8", got)
	}
	if got := dmResumeFrom(inv, PreservedSeat{}, space); got != 13 {
		t.Errorf("with only the stream's last sequence: %d, want 13", got)
	}
	if got := dmResumeFrom(&Inventory{}, PreservedSeat{}, space); got != 0 {
		t.Errorf("with nothing recorded: %d, want 0 (from now)", got)
	}
}
