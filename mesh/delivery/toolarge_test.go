package delivery_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestAPostTooLargeToCopyIsTerminatedOnce: a post whose stored copy would
// be larger than a message may be (its text of raw `<`, which a copy
// re-encodes six bytes each) is terminated with one log line and a notice
// to its sender; the fan-out goes on with the next post. Before, it was
// retried and logged every 2 s, forever.
func TestAPostTooLargeToCopyIsTerminatedOnce(t *testing.T) {
	h := newHarness(t, true)
	var mu sync.Mutex
	var logged []string
	h.startServiceWith(delivery.Options{Logf: func(f string, a ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(f, a...))
		mu.Unlock()
	}})
	back, gone := durableMember(t, h, "m", "team")
	gone()
	posterPath, _ := h.mint(agent{name: "poster"})
	poster := h.connect(posterPath, mesh.Options{OneShot: true, Subscribe: []string{}})
	big := fmt.Sprintf(`{"id":"big","ts":1,"space":%q,"from":{"id":"local.poster","name":"poster"},"channel":"team","parts":[{"kind":"text","text":"%s"}]}`, space, strings.Repeat("<", 400<<10))
	seq := testmesh.StoreData(t, h.op, wire.Root(space)+".chat.local.poster.team", []byte(big))
	post(t, poster, "team", "small after big")
	if got := texts(collect(t, back(), 5*time.Second)); !equal(got, []string{"small after big"}) {
		t.Fatalf("the member got %q", got)
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		items, err := poster.Collect(ctxT(t), 0)
		if err != nil {
			return err
		}
		for _, it := range items {
			_ = it.Ack()
			if it.Msg.From.ID == delivery.NoticeSender.ID() && strings.Contains(it.Msg.Text(), "your post big to #team") {
				return nil
			}
		}
		return fmt.Errorf("no notice to the sender yet")
	})
	mu.Lock()
	defer mu.Unlock()
	var about []string
	for _, l := range logged {
		if strings.Contains(l, fmt.Sprintf("CHAT seq %d", seq)) {
			about = append(about, l)
		}
	}
	if len(about) != 1 || !strings.Contains(about[0], "terminated") {
		t.Fatalf("the log says of seq %d: %q, want one line that it was terminated", seq, about)
	}
}
