package ep_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/cotal-go/cotal/mesh/ep"
)

// The registry read in one direct request says what a watch of the same
// keys says, delete markers included; where the bucket answers no direct
// get, the read falls back to the watch.
func TestRegistrySnapshotDirectIsTheWatch(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	put := func(key string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if _, err := h.kv.Put(ctx, key, b); err != nil {
			t.Fatal(err)
		}
	}
	spec := ep.SvcSpec{Endpoint: endpoint, Owner: "local.op", ClusterDigests: []string{}}
	put("svc.test_echo.i1.spec", spec)
	put("svc.test_echo.i1.status", ep.SvcStatus{State: ep.StateReady, Epoch: 3})
	put("svc.test_echo.i1.spec", spec) // re-registered: the last revision counts
	put("svc.test_echo.i2.spec", spec)
	if err := h.kv.Delete(ctx, "svc.test_echo.i2.spec"); err != nil {
		t.Fatal(err)
	}
	put("svc.test_echo.i3.status", ep.SvcStatus{State: ep.StateExited, Epoch: 1})
	put("svc.other_thing.i9.spec", spec) // another endpoint: not read

	watched, err := ep.SnapshotRegistrations(ctx, h.kv, nil, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := ep.LastEntries(ctx, h.op, h.kv.Bucket(), []string{"svc.test_echo.*.spec", "svc.test_echo.*.status"})
	if err != nil {
		t.Fatalf("the direct read: %v", err)
	}
	if len(entries) != 4 {
		t.Fatalf("the direct read gave %d entries, want 4 (i1 spec and status, i2's delete marker, i3 status)", len(entries))
	}
	direct, err := ep.SnapshotRegistrations(ctx, h.kv, h.op, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(direct, watched) {
		t.Fatalf("direct read %s\nwatch %s", dump(direct), dump(watched))
	}
	if r := direct["i2"]; r == nil || !r.Deregistered || r.SpecRevision != 0 {
		t.Fatalf("i2 read %+v, want deregistered", r)
	}
	if r := direct["i1"]; r == nil || r.SpecRevision <= r.StatusRevision || r.Status == nil || r.Status.Epoch != 3 {
		t.Fatalf("i1 read %+v, want its re-registration's revision and epoch 3", r)
	}

	// A bucket whose stream answers no direct get: the same, by the watch.
	st, err := h.js.Stream(ctx, "KV_"+h.kv.Bucket())
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	cfg.AllowDirect = false
	if _, err := h.js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := ep.LastEntries(ctx, h.op, h.kv.Bucket(), []string{"svc.test_echo.*.spec"}); !errors.Is(err, ep.ErrNoDirectGet) {
		t.Fatalf("a direct read of a bucket without direct gets: %v, want ErrNoDirectGet", err)
	}
	fallback, err := ep.SnapshotRegistrations(ctx, h.kv, h.op, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fallback, watched) {
		t.Fatalf("read without direct gets %s\nwatch %s", dump(fallback), dump(watched))
	}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", " ")
	return string(b)
}
