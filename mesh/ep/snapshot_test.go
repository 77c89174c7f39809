package ep_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

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

	watched, err := ep.SnapshotRegistrations(ctx, h.kv, nil, endpoint, ep.ReadAll)
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
	direct, err := ep.SnapshotRegistrations(ctx, h.kv, h.op, endpoint, ep.ReadAll)
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

	// The lighter reads a scatter makes: the freeze without the specs'
	// bodies, the reconcile with the specs' revisions alone.
	for _, via := range []struct {
		name string
		nc   *nats.Conn
	}{{"direct", h.op}, {"watch", nil}} {
		freeze, err := ep.SnapshotRegistrations(ctx, h.kv, via.nc, endpoint, ep.ReadStatus)
		if err != nil {
			t.Fatal(err)
		}
		revs, err := ep.SnapshotRegistrations(ctx, h.kv, via.nc, endpoint, ep.ReadRevisions)
		if err != nil {
			t.Fatal(err)
		}
		for iid, w := range watched {
			f := freeze[iid]
			if f == nil || f.SpecRevision != w.SpecRevision || f.Deregistered != w.Deregistered || !reflect.DeepEqual(f.Status, w.Status) || f.Spec.Endpoint != "" {
				t.Errorf("%s freeze read of %s: %s, want %s without its spec's body", via.name, iid, dump(f), dump(w))
			}
			r := revs[iid]
			if w.SpecRevision == 0 && !w.Deregistered {
				if r != nil {
					t.Errorf("%s revisions read has %s, which has a status alone: %s", via.name, iid, dump(r))
				}
				continue
			}
			if r == nil || r.SpecRevision != w.SpecRevision || r.Deregistered != w.Deregistered || r.Status != nil {
				t.Errorf("%s revisions read of %s: %s, want revision %d alone", via.name, iid, dump(r), w.SpecRevision)
			}
		}
	}
	if _, err := h.kv.Put(ctx, "svc.test_echo.i4.spec", []byte("{garbled")); err != nil {
		t.Fatal(err)
	}
	if _, err := ep.SnapshotRegistrations(ctx, h.kv, h.op, endpoint, ep.ReadRevisions); err == nil {
		t.Error("a revisions read took a spec that is not JSON")
	}
	if err := h.kv.Delete(ctx, "svc.test_echo.i4.spec"); err != nil {
		t.Fatal(err)
	}
	watched, err = ep.SnapshotRegistrations(ctx, h.kv, nil, endpoint, ep.ReadAll)
	if err != nil {
		t.Fatal(err)
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
	fallback, err := ep.SnapshotRegistrations(ctx, h.kv, h.op, endpoint, ep.ReadAll)
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

// A direct read of more entries than its first buffer holds loses none,
// however slowly its reader takes them: a freeze that dropped a spec
// would leave an instance out of the expected set without a word. Two
// reads on one connection at once each get their own entries.
func TestRegistrySnapshotLosesNoEntry(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	const n = 300
	spec, _ := json.Marshal(ep.SvcSpec{Endpoint: endpoint, Owner: "local.op", ClusterDigests: []string{}})
	for i := range n {
		if _, err := h.kv.Put(ctx, fmt.Sprintf("svc.test_echo.i%03d.spec", i), spec); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.kv.Put(ctx, "svc.other_thing.i1.spec", spec); err != nil {
		t.Fatal(err)
	}
	nc := h.conn("reader")
	errs := make(chan error, 10)
	for _, filter := range slices.Repeat([]string{"svc.test_echo.*.spec", "svc.other_thing.*.spec"}, 5) {
		go func() {
			got, err := ep.LastEntries(ctx, nc, h.kv.Bucket(), []string{filter})
			want := n
			if filter == "svc.other_thing.*.spec" {
				want = 1
			}
			if err == nil && len(got) != want {
				err = fmt.Errorf("%s: %d entries, want %d", filter, len(got), want)
			}
			errs <- err
		}()
	}
	for range 10 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// The reconcile's mark of an unchanged registry is the newest entry on
// any of the endpoint's spec keys, a deletion's included, and never a
// status's or another endpoint's.
func TestLastSpecSeqIsTheNewestSpecEntry(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	put := func(key string) uint64 {
		t.Helper()
		rev, err := h.kv.Put(ctx, key, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	if _, ok := ep.LastSpecSeq(ctx, h.op, h.kv.Bucket(), endpoint); ok {
		t.Fatal("a mark on a registry with no spec")
	}
	put("svc.test_echo.i1.spec")
	want := put("svc.test_echo.i2.spec")
	put("svc.test_echo.i1.status")
	put("svc.other_thing.i9.spec")
	if got, ok := ep.LastSpecSeq(ctx, h.op, h.kv.Bucket(), endpoint); !ok || got != want {
		t.Fatalf("mark %d (%v), want %d: the last spec put", got, ok, want)
	}
	if err := h.kv.Delete(ctx, "svc.test_echo.i1.spec"); err != nil {
		t.Fatal(err)
	}
	st, err := h.kv.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want = st.(interface{ StreamInfo() *jetstream.StreamInfo }).StreamInfo().State.LastSeq
	if got, ok := ep.LastSpecSeq(ctx, h.op, h.kv.Bucket(), endpoint); !ok || got != want {
		t.Fatalf("mark %d (%v), want %d: the deletion", got, ok, want)
	}
}
