package presence_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/presence"
)

// A record whose card.id is not its key is dropped with a warning.
func TestWatcherDropsMismatchedCardID(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	warn := &warnings{}
	watch := startWatcher(t, kv, warn)
	rawRecord(t, kv, "local.mallory", presence.Record{Card: card("eve"), Status: presence.Working, TS: time.Now().UnixMilli()})
	rawRecord(t, kv, "local.eve", presence.Record{Card: card("eve"), Status: presence.Idle, TS: time.Now().UnixMilli()})
	// Entries arrive in order, so once eve is in, mallory's has been seen.
	testutil.WaitFor(t, 5*time.Second, online(watch, "local.eve"))
	if err := warn.find(`"local.mallory"`); err != nil {
		t.Fatal(err)
	}
	if _, ok := watch.Peer("local.mallory"); ok {
		t.Fatal("the mismatched record was listed under its key")
	}
	if p, _ := watch.Peer("local.eve"); p.Status != presence.Idle {
		t.Fatalf("eve %+v: the forged working record must not have been applied to her", p)
	}
}

// An old record of a peer never seen is listed quietly as offline; an old
// record of a known peer is ignored.
func TestWatcherOldRecordOfUnknownPeerIsOffline(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	warn := &warnings{}
	watch := startWatcher(t, kv, warn)
	old := time.Now().Add(-10 * time.Second).UnixMilli()
	rawRecord(t, kv, "local.olga", presence.Record{Card: card("olga"), Status: presence.Working, TS: old})
	testutil.WaitFor(t, 5*time.Second, offline(watch, "local.olga", presence.ReasonSilent))
	p, _ := watch.Peer("local.olga")
	if p.Known || p.Status != presence.Offline || p.Record.Status != presence.Working || !p.HeartbeatAt.Equal(time.UnixMilli(old)) {
		t.Fatalf("olga %+v: want offline, not known, last record kept with its heartbeat time", p)
	}

	// Known peer: a live record, then an old one, which must not win.
	now := time.Now().UnixMilli()
	rawRecord(t, kv, "local.pia", presence.Record{Card: card("pia"), Status: presence.Working, TS: now})
	testutil.WaitFor(t, 5*time.Second, online(watch, "local.pia"))
	rawRecord(t, kv, "local.pia", presence.Record{Card: card("pia"), Status: presence.Idle, TS: old})
	rawRecord(t, kv, "local.zed", presence.Record{Card: card("zed"), Status: presence.Idle, TS: now})
	testutil.WaitFor(t, 5*time.Second, online(watch, "local.zed"))
	if p, _ := watch.Peer("local.pia"); p.Offline || p.Record.Status != presence.Working || !p.Known {
		t.Fatalf("pia %+v: an old record of a known peer must be ignored", p)
	}
	if n := warn.count(); n != 0 {
		t.Fatalf("old records are quiet, got %d warnings", n)
	}
}

// A graceful Close shows as said offline; Changes signals it; the roster
// is sorted by lowercase name.
func TestWatcherSaidOfflineAndRosterOrder(t *testing.T) {
	t.Parallel()
	kv := bucket(t)
	watch := startWatcher(t, kv, nil)
	wb, _ := startWriter(t, kv, "Bea")
	startWriter(t, kv, "al")
	startWriter(t, kv, "cy")
	testutil.WaitFor(t, 5*time.Second, func() error {
		return errors.Join(online(watch, "local.Bea")(), online(watch, "local.al")(), online(watch, "local.cy")())
	})
	var names []string
	for _, p := range watch.Roster() {
		names = append(names, p.Name)
	}
	if fmt.Sprint(names) != "[al Bea cy]" {
		t.Fatalf("roster order %v, want [al Bea cy]", names)
	}
	drain := func() {
		for {
			select {
			case <-watch.Changes():
			default:
				return
			}
		}
	}
	drain()
	if err := wb.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-watch.Changes():
	case <-time.After(5 * time.Second):
		t.Fatal("no change signalled for a peer going offline")
	}
	testutil.WaitFor(t, 5*time.Second, offline(watch, "local.Bea", presence.ReasonSaidOffline))
	if p, _ := watch.Peer("local.Bea"); p.StatusSince.IsZero() || p.Record.Attention != "" {
		t.Fatalf("Bea %+v: want offline since her final write, without attention", p)
	}
	watch.Close()
	if v := watch.View(); v.State != presence.Current || !v.Fresh {
		t.Fatalf("closed watcher view %+v, want current (not watching)", v)
	}
}
