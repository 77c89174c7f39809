package presence

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Why a peer is shown offline.
const (
	ReasonSaidOffline = "said offline" // it wrote a final offline record
	ReasonDeleted     = "deleted"      // its key was deleted or purged
	ReasonSilent      = "silent"       // its heartbeat lapsed while others were heard
	ReasonAbsent      = "absent"       // a rebind found its key gone from the bucket
)

// Peer is one roster row. Every fact carries a time so a reader can show
// its age rather than claim it is current.
type Peer struct {
	ID     string
	Name   string // card.name, or the actor when the card has none
	Role   string
	Record Record // the last record accepted for this key

	Status        Status // Record.Status, or Offline when derived offline
	Offline       bool
	OfflineReason string // one of the Reason constants when Offline

	LastHeard   time.Time // local receive time of the last accepted record
	HeartbeatAt time.Time // Record.TS, on the publisher's clock
	StatusSince time.Time // statusSince of the record; when offline, when it went offline
	Known       bool      // a live (fresh, not offline) record was heard from it by this watcher
}

// Heard is when the peer was last heard from: the time its last record
// was written (HeartbeatAt), so a reader that has just replayed the bucket
// shows the heartbeat's real age rather than its own read time; never
// later than the record's arrival, so a publisher whose clock runs ahead
// is not taken as fresher than it is.
func (p *Peer) Heard() time.Time {
	switch {
	case p.HeartbeatAt.IsZero() || p.HeartbeatAt.Unix() <= 0:
		return p.LastHeard
	case p.LastHeard.IsZero() || p.HeartbeatAt.Before(p.LastHeard):
		return p.HeartbeatAt
	}
	return p.LastHeard
}

// ViewState says whether the roster can be trusted as a picture of now.
type ViewState string

const (
	Current     ViewState = "current"     // the watch is live (or proved the bucket empty)
	Unpopulated ViewState = "unpopulated" // the initial replay has not been consumed yet
	Stale       ViewState = "stale"       // the watch has been silent for longer than the TTL
)

// View is the state of the watcher's own picture, with its times.
type View struct {
	State        ViewState
	Fresh        bool
	StaleSince   time.Time // lastDelivery + TTL when Stale
	LastDelivery time.Time // local time the watch last delivered anything
}

// sortRoster orders peers by lowercase name, then id.
func sortRoster(ps []Peer) {
	slices.SortFunc(ps, func(a, b Peer) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.ID, b.ID))
	})
}

// clone returns a peer sharing nothing with p.
func (p *Peer) clone() Peer {
	c := *p
	c.Record = p.Record.clone()
	return c
}

func (p *Peer) markOffline(reason string, since time.Time) {
	p.Offline, p.Status, p.OfflineReason, p.StatusSince = true, Offline, reason, since
}

// lapsedAt is when the peer's heartbeat ran out, capped at now.
func (p *Peer) lapsedAt(now time.Time) time.Time {
	if t := p.HeartbeatAt.Add(TTL); !p.HeartbeatAt.IsZero() && t.Before(now) {
		return t
	}
	return now
}

// peerFrom builds the row for an accepted record heard at now.
func peerFrom(rec Record, now time.Time) *Peer {
	name := rec.Card.Name
	if name == "" {
		name = rec.Card.ID
		if _, actor, ok := strings.Cut(name, "."); ok {
			name = actor
		}
	}
	return &Peer{
		ID:          rec.Card.ID,
		Name:        name,
		Role:        rec.Card.Role,
		Record:      rec,
		Status:      rec.Status,
		LastHeard:   now,
		HeartbeatAt: msTime(rec.TS),
		StatusSince: msTime(rec.StatusSince),
	}
}

// sameExceptTS reports whether two records differ only in their heartbeat
// time: such a rewrite updates the roster silently.
func sameExceptTS(a, b Record) bool {
	a.TS, b.TS = 0, 0
	return reflect.DeepEqual(a, b)
}

// roster maps a presence key to its row.
type roster map[string]*Peer

// apply folds one watch entry into the roster following the observer rules
// of spec §5. It reports whether a reader would see a change and, for a
// dropped record, a warning. Callers hold w.mu.
func (r roster) apply(e jetstream.KeyValueEntry, now time.Time) (changed bool, warning string) {
	key := e.Key()
	p, known := r[key]
	if op := e.Operation(); op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge {
		if !known || (p.Offline && p.OfflineReason == ReasonDeleted) {
			return false, ""
		}
		p.markOffline(ReasonDeleted, now)
		return true, ""
	}
	var rec Record
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return false, fmt.Sprintf("presence: dropped the value under key %q (revision %d): not a presence record: %v", key, e.Revision(), err)
	}
	if rec.Card.ID != key {
		return false, fmt.Sprintf("presence: dropped the record under key %q (revision %d): its card.id is %q", key, e.Revision(), rec.Card.ID)
	}
	switch rec.Status {
	case Idle, Waiting, Working, Offline:
	default:
		return false, fmt.Sprintf("presence: dropped the record under key %q (revision %d): unknown status %q", key, e.Revision(), rec.Status)
	}
	np := peerFrom(rec, now)
	if known {
		np.Known = p.Known
	}
	switch {
	case rec.Status == Offline:
		np.markOffline(ReasonSaidOffline, msTime(rec.TS))
	case now.Sub(msTime(rec.TS)) > TTL:
		// An old record: a replay after a stalled watch, or a peer that
		// went quiet before we looked. Keep what we knew; show a newcomer
		// as offline without making an event of it.
		if known {
			return false, ""
		}
		np.markOffline(ReasonSilent, np.lapsedAt(now))
	default:
		np.Known = true
	}
	changed = !known || p.Offline != np.Offline || p.OfflineReason != np.OfflineReason || !sameExceptTS(p.Record, rec)
	r[key] = np
	return changed, ""
}
