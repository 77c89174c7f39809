package presence_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/presence"
)

// Spec §16 item 20: presence lives under card.id, rewritten every 2000 ms,
// in a bucket whose TTL is 6000 ms.
func TestConformance20_HeartbeatKeyAndTTL(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	rec := record(t, kv)
	w, _ := startWriter(t, kv, "alice")
	if w.Key() != "local.alice" {
		t.Fatalf("key %q, want local.alice", w.Key())
	}
	testutil.WaitFor(t, 12*time.Second, func() error {
		if n := len(rec.of("local.alice")); n < 3 {
			return fmt.Errorf("%d revisions under local.alice, want the first write and two heartbeats", n)
		}
		return nil
	})
	revs := rec.of("local.alice")
	for i := 1; i < 3; i++ {
		if revs[i].rev <= revs[i-1].rev {
			t.Fatalf("revision %d after %d", revs[i].rev, revs[i-1].rev)
		}
		gap := time.UnixMilli(revs[i].rec.TS).Sub(time.UnixMilli(revs[i-1].rec.TS))
		if gap < presence.Heartbeat-300*time.Millisecond || gap > presence.Heartbeat+700*time.Millisecond {
			t.Fatalf("heartbeat gap %s, want about %s", gap, presence.Heartbeat)
		}
		if revs[i].rec.Card.ID != "local.alice" {
			t.Fatalf("record card.id %q under key local.alice", revs[i].rec.Card.ID)
		}
	}
	st, err := kv.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.TTL() != 6*time.Second || presence.TTL != 6*time.Second || presence.Heartbeat != 2*time.Second {
		t.Fatalf("bucket TTL %s, package TTL %s, heartbeat %s; want 6s, 6s, 2s", st.TTL(), presence.TTL, presence.Heartbeat)
	}
}

// Spec §16 item 21: a live client never writes offline; a graceful stop
// writes exactly one offline record without attention, channelModes or
// statusSince.
func TestConformance21_OfflineOnlyOnClose(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	rec := record(t, kv)
	w, _ := startWriter(t, kv, "bob")
	if _, err := presence.ParseStatus("offline"); !errors.Is(err, presence.ErrInvalidStatus) {
		t.Fatalf("ParseStatus(offline) = %v, want ErrInvalidStatus", err)
	}
	if err := w.Set(presence.Offline, ""); !errors.Is(err, presence.ErrInvalidStatus) {
		t.Fatalf("Set(offline) = %v, want ErrInvalidStatus", err)
	}
	if err := w.SetAttention(presence.Focus); err != nil {
		t.Fatal(err)
	}
	if err := w.SetChannelModes(map[string]string{"general": "quiet"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Set(presence.Working, "reviewing"); err != nil {
		t.Fatal(err)
	}
	// Heartbeats come every 2 s; allow for a loaded CI machine.
	testutil.WaitFor(t, 12*time.Second, func() error {
		revs := rec.of("local.bob")
		if len(revs) == 0 {
			return errors.New("nothing written")
		}
		last := revs[len(revs)-1].rec
		if last.Status != presence.Working || last.Attention != presence.Focus || last.ChannelModes["general"] != "quiet" {
			return fmt.Errorf("last record %+v, want working, focus, general quiet", last)
		}
		if len(revs) < 4 {
			return fmt.Errorf("%d revisions, want a heartbeat after the changes too", len(revs))
		}
		return nil
	})
	for _, rv := range rec.of("local.bob") {
		if rv.rec.Status == presence.Offline {
			t.Fatalf("revision %d written offline during life", rv.rev)
		}
	}

	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// A sentinel written after Close: once it is seen, everything the
	// writer wrote before it has been seen too.
	rawRecord(t, kv, "local.sentinel", presence.Record{Card: card("sentinel"), Status: presence.Idle, TS: time.Now().UnixMilli()})
	testutil.WaitFor(t, 5*time.Second, func() error {
		if len(rec.of("local.sentinel")) == 0 {
			return errors.New("sentinel not seen")
		}
		return nil
	})
	var offline []revision
	for _, rv := range rec.of("local.bob") {
		if rv.rec.Status == presence.Offline {
			offline = append(offline, rv)
		}
	}
	if len(offline) != 1 {
		t.Fatalf("%d offline records, want exactly one", len(offline))
	}
	revs := rec.of("local.bob")
	if last := revs[len(revs)-1]; last.rev != offline[0].rev {
		t.Fatalf("revision %d came after the offline record %d", last.rev, offline[0].rev)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(offline[0].raw, &fields); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"attention", "channelModes", "statusSince"} {
		if _, ok := fields[f]; ok {
			t.Errorf("offline record carries %s: %s", f, offline[0].raw)
		}
	}
	for _, f := range []string{"card", "status", "ts"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("offline record lacks %s: %s", f, offline[0].raw)
		}
	}
}

// Spec §16 item 22: a peer whose heartbeat is older than the TTL is shown
// offline while others keep heartbeating.
func TestConformance22_SilentPeerGoesOfflineWhileOthersBeat(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	watch := startWatcher(t, kv, nil)
	a, crashA := startWriter(t, kv, "anna")
	startWriter(t, kv, "ben")
	testutil.WaitFor(t, 5*time.Second, func() error {
		return errors.Join(online(watch, "local.anna")(), online(watch, "local.ben")())
	})
	crashA() // heartbeat stops without a final record
	<-a.Stopped()
	stoppedAt := time.Now()
	testutil.WaitFor(t, 14*time.Second, func() error {
		if err := online(watch, "local.ben")(); err != nil {
			t.Fatalf("ben, still heartbeating: %v", err)
		}
		return offline(watch, "local.anna", presence.ReasonSilent)()
	})
	p, _ := watch.Peer("local.anna")
	if took := time.Since(stoppedAt); took < presence.TTL-presence.Heartbeat {
		t.Fatalf("anna offline after only %s", took)
	}
	if p.Status != presence.Offline || !p.StatusSince.Equal(p.HeartbeatAt.Add(presence.TTL)) || p.LastHeard.IsZero() {
		t.Fatalf("anna %+v: want offline since her last heartbeat + TTL, with LastHeard", p)
	}
	if v := watch.View(); v.State != presence.Current || !v.Fresh {
		t.Fatalf("view %+v, want current", v)
	}
}

// Spec §16 item 23: when the whole watch is silent for longer than the TTL,
// nobody is marked offline and the view is stale. Here every writer
// crashes; once the hold on rebinding is lifted, the rebind finds the
// bucket empty (the key expired silently) and proves nobody present.
func TestConformance23_SilentWatchIsStaleNotOffline(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	warn := &warnings{}
	watch := startWatcher(t, kv, warn)
	presence.HoldRebind(watch, true)
	w, crash := startWriter(t, kv, "carol")
	testutil.WaitFor(t, 5*time.Second, online(watch, "local.carol"))
	crash()
	<-w.Stopped()

	testutil.WaitFor(t, 10*time.Second, func() error {
		if v := watch.View(); v.State != presence.Stale {
			return fmt.Errorf("view %+v, want stale", v)
		}
		return nil
	})
	v := watch.View()
	if v.Fresh || v.LastDelivery.IsZero() || !v.StaleSince.Equal(v.LastDelivery.Add(presence.TTL)) {
		t.Fatalf("view %+v: want not fresh, staleSince = lastDelivery + TTL", v)
	}
	// Let the sweep see the stale view; it must still mark nobody offline.
	testutil.WaitFor(t, 5*time.Second, func() error { return warn.find("silent for") })
	if err := online(watch, "local.carol")(); err != nil {
		t.Fatalf("under a stale view: %v", err)
	}

	presence.HoldRebind(watch, false)
	testutil.WaitFor(t, 8*time.Second, offline(watch, "local.carol", presence.ReasonAbsent))
	if err := warn.find("rebinding the watch"); err != nil {
		t.Fatal(err)
	}
	if v := watch.View(); v.State != presence.Current || !v.Fresh {
		t.Fatalf("after a rebind onto an empty bucket the view is %+v, want current", v)
	}
	if len(watch.Roster()) != 1 {
		t.Fatalf("roster %+v, want carol kept", watch.Roster())
	}
}

// Spec §16 item 24: before the initial replay is consumed, the view is
// unpopulated and not fresh.
func TestConformance24_UnpopulatedBeforeSnapshot(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	startWriter(t, kv, "dan")
	watch := presence.NewWatcher(kv)
	if v := watch.View(); v.State != presence.Current || !v.Fresh {
		t.Fatalf("not started: view %+v, want current and fresh", v)
	}
	release := presence.HoldDeliveries(watch)
	if err := watch.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	if v := watch.View(); v.State != presence.Unpopulated || v.Fresh {
		t.Fatalf("before the replay: view %+v, want unpopulated, not fresh", v)
	}
	if _, ok := watch.Peer("local.dan"); ok {
		t.Fatal("a peer is listed before the replay was consumed")
	}
	release()
	if !watch.WaitForSnapshot(context.Background(), 5*time.Second) {
		t.Fatal("no snapshot")
	}
	if v := watch.View(); v.State != presence.Current || !v.Fresh {
		t.Fatalf("after the replay: view %+v, want current", v)
	}
	if err := online(watch, "local.dan")(); err != nil {
		t.Fatal(err)
	}
}

// Spec §16 item 25: waitForPresenceSnapshot times out on an empty bucket
// and reports a snapshot after a replay otherwise.
func TestConformance25_SnapshotOrTimeout(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	empty := startWatcher(t, kv, nil)
	start := time.Now()
	if empty.WaitForSnapshot(context.Background(), 300*time.Millisecond) {
		t.Fatal("snapshot reported for an empty bucket")
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("returned after %s, before the timeout", took)
	}
	if v := empty.View(); v.State != presence.Current || !v.Fresh {
		t.Fatalf("bound to an empty bucket: view %+v, want current", v)
	}

	startWriter(t, kv, "erin")
	full := startWatcher(t, kv, nil)
	if !full.WaitForSnapshot(context.Background(), 5*time.Second) {
		t.Fatal("no snapshot for a bucket holding a record")
	}
	if err := online(full, "local.erin")(); err != nil {
		t.Fatalf("after the snapshot: %v", err)
	}
}

// Spec §16 item 26: a KV delete marks the peer offline and keeps it listed.
func TestConformance26_DeleteMarksOfflineKeepsListed(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	watch := startWatcher(t, kv, nil)
	w, crash := startWriter(t, kv, "fay")
	startWriter(t, kv, "gus")
	testutil.WaitFor(t, 5*time.Second, online(watch, "local.fay"))
	crash() // so no heartbeat rewrites the key after the delete
	<-w.Stopped()
	if err := kv.Delete(context.Background(), "local.fay"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, offline(watch, "local.fay", presence.ReasonDeleted))
	found := false
	for _, p := range watch.Roster() {
		found = found || p.ID == "local.fay"
	}
	if !found {
		t.Fatal("deleted peer dropped from the roster")
	}
	if err := online(watch, "local.gus")(); err != nil {
		t.Fatal(err)
	}
}
