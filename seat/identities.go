package seat

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// identities is the manager's copy of the space's identity records, kept
// by a watch so that a call from a caller it already knows is authorized
// without a read of the bucket. Only a positive answer is taken from it: a
// caller it does not hold as current (not yet seen, another lifecycle,
// retired) is read live, so a fresh mint is never refused by a copy that
// lags. A lagging copy cannot let in a lifecycle that has ended either:
// its credential is revoked, and its connections closed, before its
// record changes. When the watch ends the copy is dropped and every call
// reads live.
type identities struct {
	mu   sync.RWMutex
	recs map[string]wire.IdentityRecord // by records-bucket key; nil: not watching
}

// current returns p's record when the copy holds it as naming uid as the
// live lifecycle.
func (ids *identities) current(p wire.Principal, uid string) (wire.IdentityRecord, bool) {
	ids.mu.RLock()
	defer ids.mu.RUnlock()
	rec, ok := ids.recs[wire.IdentityKey(p)]
	if !ok || rec.ID != p.ID() || !rec.Current(uid) {
		return wire.IdentityRecord{}, false
	}
	return rec, true
}

// follow keeps the copy from the watch w until it ends, then drops it.
// An entry that is not a record is not kept, and current takes a record
// only under its own principal's key, as the live read does; a deleted or
// purged key is forgotten.
func (ids *identities) follow(w jetstream.KeyWatcher) {
	defer func() {
		_ = w.Stop()
		ids.mu.Lock()
		ids.recs = nil
		ids.mu.Unlock()
	}()
	for e := range w.Updates() {
		if e == nil {
			continue // the end of the replay
		}
		key := e.Key()
		var rec wire.IdentityRecord
		keep := e.Operation() == jetstream.KeyValuePut && json.Unmarshal(e.Value(), &rec) == nil
		ids.mu.Lock()
		if ids.recs == nil {
			ids.recs = map[string]wire.IdentityRecord{}
		}
		if keep {
			ids.recs[key] = rec
		} else {
			delete(ids.recs, key)
		}
		ids.mu.Unlock()
	}
}

// watchIdentities starts the copy of the identity records for the
// manager's life. A watch that cannot start leaves every call to read
// live.
func (m *Manager) watchIdentities(ctx context.Context) {
	if m.opts.Open {
		return
	}
	kv, err := m.recordsKV(ctx)
	if err != nil {
		m.logf("identity records: %v (every call reads them live)", err)
		return
	}
	w, err := kv.Watch(m.ctx, "identity.>")
	if err != nil {
		m.logf("watching the identity records: %v (every call reads them live)", err)
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.ids.follow(w)
	}()
}
