package delivery_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
)

// A connector holds 200 items; 300 posts to its durable channel arrive
// while nobody reads. What does not fit stays stored and comes back.
func TestConnectorHoldingTwoHundredLosesNothingOfThreeHundred(t *testing.T) {
	h := newHarness(t, false)
	path, id := h.mint(agent{name: "m", subscribe: []string{"team"}})
	h.shortenAckWait(id, 3*time.Second)
	e := h.connect(path, mesh.Options{})
	if r := e.BootJoins(); len(r) != 1 || !r[0].Durable {
		t.Fatalf("boot joins %+v; want #team held durably", r)
	}
	p := h.poster("poster")
	const n = 300
	for i := range n {
		post(t, p, "team", fmt.Sprintf("p%03d", i))
	}
	h.settled()
	got := map[string]int{}
	testutil.WaitFor(t, 20*time.Second, func() error {
		for _, it := range collect(t, e, 0) {
			got[it.Msg.Text()]++
		}
		if len(got) < n {
			return fmt.Errorf("%d of %d posts read so far", len(got), n)
		}
		return nil
	})
	for text, c := range got {
		if c != 1 {
			t.Errorf("%s read %d times", text, c)
		}
	}
	evicted, discarded := e.Overflow()
	if evicted == 0 || discarded != 0 {
		t.Fatalf("overflow: %d evicted, %d discarded; want the bound exercised and nothing discarded", evicted, discarded)
	}
}
