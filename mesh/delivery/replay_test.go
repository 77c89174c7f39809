package delivery_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestConformanceReplayWindowBoundsTheBackfill: replayWindow (the
// channel's, else the space default's) bounds how far back a joiner is
// backfilled (spec §6.1, §6.2 step 6); it bounds nothing else: history on
// demand still reads the whole retention.
func TestConformanceReplayWindowBoundsTheBackfill(t *testing.T) {
	h := newHarness(t, false)
	const window = 3 * time.Second
	if _, err := h.reg.Set(ctxT(t), "team", mesh.ChannelConfig{DeliveryClass: mesh.ClassLive, ReplayWindow: "3s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reg.Set(ctxT(t), "gen", mesh.ChannelConfig{DeliveryClass: mesh.ClassLive}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reg.Set(ctxT(t), "", mesh.ChannelConfig{ReplayWindow: "3s"}); err != nil {
		t.Fatal(err)
	}
	p := h.poster("poster")
	olds := []uint64{post(t, p, "team", "team-old"), post(t, p, "gen", "gen-old")}
	// The old posts are older than the window by the stream's own clock.
	testutil.WaitFor(t, window+10*time.Second, func() error {
		for _, seq := range olds {
			m, err := h.js.Stream(ctxT(t), wire.ChatStream(space))
			if err != nil {
				return err
			}
			raw, err := m.GetMsg(ctxT(t), seq)
			if err != nil {
				return err
			}
			if age := time.Since(raw.Time); age <= window {
				return fmt.Errorf("post %d is %s old, not yet past the %s window", seq, age, window)
			}
		}
		return nil
	})
	post(t, p, "team", "team-new")
	post(t, p, "gen", "gen-new")
	path, _ := h.mint(agent{name: "late", allowSub: []string{"team", "gen"}})
	late := h.connect(path, mesh.Options{})
	for _, ch := range []string{"team", "gen"} {
		r, err := late.Join(ctxT(t), ch)
		if err != nil {
			t.Fatal(err)
		}
		if r.Backfilled != 1 {
			t.Errorf("join #%s backfilled %d posts, want only the one inside the window", ch, r.Backfilled)
		}
	}
	got := texts(collect(t, late, 0))
	slices.Sort(got)
	if want := []string{"(h)gen-new", "(h)team-new"}; !slices.Equal(got, want) {
		t.Fatalf("backfill %v, want %v: the window cuts the older posts", got, want)
	}
	items, _, err := late.History(ctxT(t), "team", 10)
	if err != nil || len(items) != 2 {
		t.Fatalf("history on demand: %d items, %v; want both posts, the window bounds only the backfill", len(items), err)
	}
}
