package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// identityRow is the part of the space's identity record (written when an
// identity is minted) the service reads.
type identityRow struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	LifecycleUID string `json:"lifecycleUid"`
	Retired      bool   `json:"retired"`
}

// lifecycles is the service's view of the space's member lifecycles: every
// ACL row (one per lifecycle) and every identity record (one per
// principal), kept current by watching both buckets. It answers which
// lifecycles still live and which principal a mentioned name is. A row the
// view lacks is read fresh before anything is decided from its absence,
// so a lifecycle provisioned a moment ago is never taken for an ended one.
// Lock: mu is a leaf.
type lifecycles struct {
	aclKV, recKV jetstream.KeyValue

	mu    sync.RWMutex
	acl   map[string]wire.ACLRow // wire.ACLKey -> row
	ids   map[string]identityRow // principal id -> identity record
	ended map[string]bool        // ended here, before the watch brings the row
}

func newLifecycles(aclKV, recKV jetstream.KeyValue) *lifecycles {
	return &lifecycles{aclKV: aclKV, recKV: recKV, acl: map[string]wire.ACLRow{}, ids: map[string]identityRow{}, ended: map[string]bool{}}
}

// start watches both buckets until ctx ends; it returns once both initial
// replays are in, or when wait ends first.
func (l *lifecycles) start(ctx, wait context.Context) error {
	aw, err := l.aclKV.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("watching the read ACLs: %w", err)
	}
	rw, err := l.recKV.Watch(ctx, "identity.>")
	if err != nil {
		_ = aw.Stop()
		return fmt.Errorf("watching the identity records: %w", err)
	}
	ready := make(chan struct{}, 2)
	go l.follow(aw, ready, l.putACL)
	go l.follow(rw, ready, l.putIdentity)
	for range 2 {
		select {
		case <-ready:
		case <-wait.Done():
			return fmt.Errorf("reading the read ACLs and identity records: %w", wait.Err())
		}
	}
	return nil
}

// follow applies a watch's updates; nil marks the end of the replay.
func (l *lifecycles) follow(w jetstream.KeyWatcher, ready chan<- struct{}, put func(key string, val []byte, deleted bool)) {
	defer w.Stop()
	for e := range w.Updates() {
		if e == nil {
			ready <- struct{}{}
			continue
		}
		put(e.Key(), e.Value(), e.Operation() != jetstream.KeyValuePut)
	}
}

// validACLRow reports whether row is what the space writes under key:
// anything else there (garbage, an answer aimed at the key) is no row.
func validACLRow(key string, row wire.ACLRow) bool {
	return row.Principal != "" && row.Principal+"."+row.LifecycleUID == key
}

func (l *lifecycles) putACL(key string, val []byte, deleted bool) {
	var row wire.ACLRow
	if !deleted && (json.Unmarshal(val, &row) != nil || !validACLRow(key, row)) {
		return // not a row: the view keeps what it had
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if deleted {
		delete(l.acl, key)
		return
	}
	l.acl[key] = row
}

func (l *lifecycles) putIdentity(key string, val []byte, deleted bool) {
	rest, ok := strings.CutPrefix(key, "identity.")
	pid, ok2 := strings.CutSuffix(rest, ".spec")
	if !ok || !ok2 {
		return
	}
	var rec identityRow
	if !deleted && (json.Unmarshal(val, &rec) != nil || rec.ID != pid) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if deleted {
		delete(l.ids, pid)
		return
	}
	l.ids[pid] = rec
}

// markEnded records at once that a lifecycle ended, ahead of its row.
func (l *lifecycles) markEnded(p wire.Principal, uid string) {
	l.mu.Lock()
	l.ended[wire.ACLKey(p, uid)] = true
	l.mu.Unlock()
}

// isEnded reports whether this service ended the lifecycle.
func (l *lifecycles) isEnded(p wire.Principal, uid string) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.ended[wire.ACLKey(p, uid)]
}

// row returns a lifecycle's ACL row: from the view, else read fresh.
func (l *lifecycles) row(ctx context.Context, p wire.Principal, uid string) (wire.ACLRow, bool, error) {
	key := wire.ACLKey(p, uid)
	l.mu.RLock()
	row, ok := l.acl[key]
	l.mu.RUnlock()
	if ok {
		return row, true, nil
	}
	ent, err := l.aclKV.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return wire.ACLRow{}, false, nil
	}
	if err != nil {
		return wire.ACLRow{}, false, err
	}
	if err := json.Unmarshal(ent.Value(), &row); err != nil || !validACLRow(key, row) {
		return wire.ACLRow{}, false, fmt.Errorf("%w: the read ACL under %s is not a row the space wrote", errForeignEntry, key)
	}
	l.putACL(key, ent.Value(), false)
	return row, true, nil
}

// errForeignEntry is a trusted key holding what no trusted writer put
// there: its reader retries later rather than take it for a value.
var errForeignEntry = errors.New("foreign entry")

// live reports whether a member lifecycle may still be owed copies: its
// ACL row exists and has not ended, and its principal is not retired.
func (l *lifecycles) live(ctx context.Context, p wire.Principal, uid string) (bool, error) {
	if l.isEnded(p, uid) {
		return false, nil
	}
	row, ok, err := l.row(ctx, p, uid)
	if err != nil || !ok || row.Ended() {
		return false, err
	}
	l.mu.RLock()
	rec, known := l.ids[p.ID()]
	l.mu.RUnlock()
	return !known || !rec.Retired, nil
}

// named returns the principals whose identity record carries name
// (case-insensitive), with the lifecycle each record names.
func (l *lifecycles) named(name string) map[string]string {
	out := map[string]string{}
	l.mu.RLock()
	defer l.mu.RUnlock()
	for id, rec := range l.ids {
		if rec.Retired {
			continue
		}
		n := rec.Name
		if n == "" {
			if p, err := wire.ParsePrincipal(id); err == nil {
				n = p.Actor
			}
		}
		if strings.EqualFold(n, name) {
			out[id] = rec.LifecycleUID
		}
	}
	return out
}

// liveUIDs lists the lifecycles of a principal whose ACL rows still live.
func (l *lifecycles) liveUIDs(p wire.Principal) []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var out []string
	for key, row := range l.acl {
		if row.Principal == p.ID() && !row.Ended() && !l.ended[key] {
			out = append(out, row.LifecycleUID)
		}
	}
	return out
}
