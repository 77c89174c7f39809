package presence_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

const spaceName = "presence_test"

// bucket starts a real open-mode broker, provisions the space and returns
// its presence bucket.
func bucket(t *testing.T) jetstream.KeyValue {
	t.Helper()
	_, kv := space(t)
	return kv
}

// space is bucket with the JetStream handle too, for tests that break the
// bucket.
func space(t *testing.T) (jetstream.JetStream, jetstream.KeyValue) {
	t.Helper()
	_, nc := testmesh.Start(t, spaceName, true)
	ctx := testmesh.Ctx(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, wire.PresenceBucket(spaceName))
	if err != nil {
		t.Fatal(err)
	}
	return js, kv
}

func card(actor string) presence.Card {
	return presence.Card{ID: "local." + actor, Name: actor, Role: "dev"}
}

// startWriter starts a writer whose heartbeat ends when the returned
// cancel is called (a crash-like stop); Close runs at cleanup.
func startWriter(t *testing.T, kv jetstream.KeyValue, actor string, opts ...presence.WriterOption) (*presence.Writer, context.CancelFunc) {
	t.Helper()
	w := presence.NewWriter(kv, card(actor), "", opts...)
	ctx, cancel := context.WithCancel(context.Background())
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = w.Close(context.Background())
	})
	return w, cancel
}

// warnings collects OnWarning calls.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, s)
}

func (w *warnings) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.msgs)
}

func (w *warnings) find(sub string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.msgs {
		if strings.Contains(m, sub) {
			return nil
		}
	}
	return fmt.Errorf("no warning containing %q in %q", sub, w.msgs)
}

func startWatcher(t *testing.T, kv jetstream.KeyValue, warn *warnings) *presence.Watcher {
	t.Helper()
	var opts []presence.WatcherOption
	if warn != nil {
		opts = append(opts, presence.OnWarning(warn.add))
	}
	w := presence.NewWatcher(kv, opts...)
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// online polls until the peer is in the roster and online.
func online(w *presence.Watcher, id string) func() error {
	return func() error {
		p, ok := w.Peer(id)
		switch {
		case !ok:
			return fmt.Errorf("%s not in roster", id)
		case p.Offline:
			return fmt.Errorf("%s offline (%s)", id, p.OfflineReason)
		}
		return nil
	}
}

// offline polls until the peer is offline for reason.
func offline(w *presence.Watcher, id, reason string) func() error {
	return func() error {
		p, ok := w.Peer(id)
		switch {
		case !ok:
			return fmt.Errorf("%s not in roster", id)
		case !p.Offline || p.OfflineReason != reason:
			return fmt.Errorf("%s: offline=%v reason=%q, want offline %q", id, p.Offline, p.OfflineReason, reason)
		}
		return nil
	}
}

// revision is one value seen under a key, with its local receive time.
type revision struct {
	key  string
	rev  uint64
	op   jetstream.KeyValueOp
	raw  []byte
	rec  presence.Record
	seen time.Time
}

// recorder collects every revision of the bucket through its own watch.
type recorder struct {
	mu   sync.Mutex
	revs []revision
}

func record(t *testing.T, kv jetstream.KeyValue) *recorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	kw, err := kv.WatchAll(ctx, jetstream.IncludeHistory())
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range kw.Updates() {
			if e == nil {
				continue
			}
			rv := revision{key: e.Key(), rev: e.Revision(), op: e.Operation(), raw: e.Value(), seen: time.Now()}
			if e.Operation() == jetstream.KeyValuePut {
				_ = json.Unmarshal(e.Value(), &rv.rec)
			}
			r.mu.Lock()
			r.revs = append(r.revs, rv)
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = kw.Stop()
		cancel()
		<-done
	})
	return r
}

// of returns the revisions seen under key.
func (r *recorder) of(key string) []revision {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []revision
	for _, rv := range r.revs {
		if rv.key == key {
			out = append(out, rv)
		}
	}
	return out
}

// rawRecord writes a record under key exactly as given.
func rawRecord(t *testing.T, kv jetstream.KeyValue, key string, rec presence.Record) {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), key, b); err != nil {
		t.Fatal(err)
	}
}
