package delivery_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestADMFloodLeavesTheTrustedStoreServing: 200 DMs of nearly 1 MB from
// one agent to a principal that does not exist, on a 128 MiB store, fill
// only the DM stream's share of it: the delivery service keeps its lease,
// and DMs and stored copies still reach their members. Before, the flood
// filled the store and the service lost its lease.
func TestADMFloodLeavesTheTrustedStoreServing(t *testing.T) {
	const store = 128 << 20
	h := newHarnessWith(t, true, broker.Options{MaxStore: store})
	var mu sync.Mutex
	var logged []string
	h.startServiceWith(delivery.Options{Logf: func(f string, a ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(f, a...))
		mu.Unlock()
	}})
	back, gone := durableMember(t, h, "m", "team")
	gone()
	malloryPath, _ := h.mint(agent{name: "mallory"})
	mallory := h.connect(malloryPath, mesh.Options{OneShot: true, Subscribe: []string{}})
	ghost := wire.Principal{Owner: "local", Actor: "nobody_here"}
	body := strings.Repeat("x", 1<<20-4096)
	subject := wire.DMSubject(space, ghost, mallory.Me())
	for i := range 200 {
		m := nats.NewMsg(subject)
		m.Data = fmt.Appendf(nil, `{"id":"flood%d","ts":1,"space":%q,"from":{"id":"local.mallory","name":"mallory"},"to":"local.nobody_here","parts":[{"kind":"text","text":"%s"}]}`, i, space, body)
		if err := mallory.Conn().PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := mallory.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	// Outlast a lease renewal while the flood is stored.
	p := h.poster("poster")
	member := back()
	deadline := time.Now().Add(delivery.LeaseRenew + 2*time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		post(t, p, "team", fmt.Sprintf("post %d", i))
		if got := texts(collect(t, member, 5*time.Second)); len(got) != 1 || got[0] != fmt.Sprintf("post %d", i) {
			t.Fatalf("after the flood the member got %q for post %d", got, i)
		}
	}
	st, err := h.js.Stream(ctxT(t), wire.DMStream(space))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Bytes > uint64(info.Config.MaxBytes) || info.Config.MaxBytes > store/8 {
		t.Fatalf("the DM stream holds %d bytes, its limit %d of a %d byte store", info.State.Bytes, info.Config.MaxBytes, store)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, l := range logged {
		if strings.Contains(l, "lost its lease") || strings.Contains(l, "could not start serving") {
			t.Fatalf("the service stopped serving: %q", l)
		}
	}
	if !h.svc.Ready() {
		t.Fatal("the service is not serving")
	}
}
