package presence

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// run consumes the watch and sweeps the roster; it owns w.kw.
func (w *Watcher) run(ctx context.Context) {
	defer func() {
		w.unbind()
		w.mu.Lock()
		w.watching = false
		changed := w.noteViewLocked(time.Now())
		done := w.done
		w.mu.Unlock()
		w.emit(changed)
		close(done)
	}()
	if w.hold != nil {
		select {
		case <-w.hold:
		case <-ctx.Done():
			return
		}
	}
	sweep := time.NewTicker(SweepEvery)
	defer sweep.Stop()
	for {
		var updates <-chan jetstream.KeyValueEntry
		if w.kw != nil {
			updates = w.kw.Updates()
		}
		select {
		case <-ctx.Done():
			return
		case e, ok := <-updates:
			if !ok {
				w.kw = nil
				w.mu.Lock()
				w.boundEmpty = false // nothing proves the bucket still empty
				w.mu.Unlock()
				w.emit(false, "presence: the watch on bucket "+w.kv.Bucket()+" ended; it is rebound once the view goes stale")
				continue
			}
			w.deliver(e, time.Now())
		case now := <-sweep.C:
			w.sweep(ctx, now)
		}
	}
}

// deliver applies one entry, or the end-of-replay marker (nil).
func (w *Watcher) deliver(e jetstream.KeyValueEntry, now time.Time) {
	var warning string
	changed := false
	w.mu.Lock()
	if e == nil {
		changed = w.endReplayLocked(now)
	} else {
		w.lastDelivery, w.boundEmpty, w.staleWarned = now, false, false
		if w.replaying {
			w.replayCount++
			w.replaySeen[e.Key()] = true
		}
		changed, warning = w.peers.apply(e, now)
	}
	if w.noteViewLocked(now) {
		changed = true
	}
	w.mu.Unlock()
	w.emit(changed, warning)
}

// endReplayLocked closes the current binding's replay. A rebind is a fresh
// reading of the bucket: a peer whose key is gone from it is offline, so a
// rebind onto an empty bucket leaves everyone offline and the view current.
func (w *Watcher) endReplayLocked(now time.Time) (changed bool) {
	if !w.replaying {
		return false
	}
	w.replaying, w.populated = false, true
	w.lastDelivery = now // the marker is the watch speaking too
	if w.replayCount == 0 {
		w.boundEmpty = true
	} else if !w.snapshotted {
		w.snapshotted = true
		close(w.snapshot)
	}
	if w.rebound {
		for id, p := range w.peers {
			if !p.Offline && !w.replaySeen[id] {
				p.markOffline(ReasonAbsent, p.lapsedAt(now))
				changed = true
			}
		}
	}
	w.replaySeen = nil
	return changed
}

// sweep derives silent peers while the watch is live, and under a stale
// view marks nobody offline but rebinds (at most once per TTL).
func (w *Watcher) sweep(ctx context.Context, now time.Time) {
	var warnings []string
	changed, rebind := false, false
	w.mu.Lock()
	mayRebind := !w.rebindHeld.Load() && now.Sub(w.lastBind) >= TTL
	if w.kw == nil && mayRebind {
		// The watch ended (or the last rebind failed) without the view
		// going stale yet, for instance before its first replay finished.
		rebind = true
		warnings = append(warnings, "presence: rebinding the watch on bucket "+w.kv.Bucket()+": it had ended")
	}
	switch v := w.viewLocked(now); v.State {
	case Stale:
		silent := now.Sub(v.LastDelivery).Round(time.Millisecond)
		if !w.staleWarned {
			w.staleWarned = true
			warnings = append(warnings, "presence: view stale: the watch on bucket "+w.kv.Bucket()+" has been silent for "+silent.String()+
				" (last delivery "+v.LastDelivery.Format(time.TimeOnly+".000")+"); nobody is marked offline")
		}
		if !rebind && mayRebind {
			rebind = true
			warnings = append(warnings, "presence: rebinding the watch on bucket "+w.kv.Bucket()+" from its current state after "+silent.String()+" of silence")
		}
	case Current:
		for _, p := range w.peers {
			if !p.Offline && now.Sub(p.HeartbeatAt) > TTL && w.lastDelivery.Sub(p.HeartbeatAt) > TTL {
				p.markOffline(ReasonSilent, p.lapsedAt(now))
				changed = true
			}
		}
	}
	if w.noteViewLocked(now) {
		changed = true
	}
	w.mu.Unlock()
	w.emit(changed, warnings...)
	if rebind {
		w.rebind(ctx, now)
	}
}

// rebind replaces the watch with a new one replaying the bucket's current
// state.
func (w *Watcher) rebind(ctx context.Context, now time.Time) {
	w.unbind()
	w.lastBind = now
	kw, err := w.kv.WatchAll(ctx)
	if err != nil {
		if ctx.Err() == nil {
			w.emit(false, "presence: rebinding the watch on bucket "+w.kv.Bucket()+" failed: "+err.Error())
		}
		return
	}
	w.kw = kw
	w.mu.Lock()
	w.replaying, w.rebound, w.replayCount, w.replaySeen = true, true, 0, map[string]bool{}
	w.mu.Unlock()
}

// unbind stops the current watch, draining it so the client's delivery
// callback is never left blocked on a full channel.
func (w *Watcher) unbind() {
	kw := w.kw
	w.kw = nil
	if kw == nil {
		return
	}
	_ = kw.Stop()
	go func() {
		for range kw.Updates() {
		}
	}()
}
