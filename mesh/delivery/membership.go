package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Membership states.
const (
	StateActive = "durable-active" // stores copies for the member
	StateLeft   = "live-confirmed" // left: copies only up to the leave cursor
)

// Membership is one member lifecycle's durable hold on a channel or a
// channel family (`team.>`). Cursors are CHAT sequences: the member is
// owed a stored copy of a post at sequence s when JoinCursor < s and,
// after a leave, s <= LeaveCursor.
type Membership struct {
	Channel        string    `json:"channel"` // concrete channel or a `>` family
	Owner          string    `json:"owner"`   // the member principal, dot-form
	LifecycleUID   string    `json:"lifecycleUid"`
	State          string    `json:"state"`
	JoinCursor     uint64    `json:"joinCursor"`
	LeaveCursor    uint64    `json:"leaveCursor,omitempty"`
	Generation     uint64    `json:"generation"`
	Activated      bool      `json:"activated"`
	WriterIdentity string    `json:"writerIdentity"`
	UpdatedAt      time.Time `json:"updatedAt"`

	rev uint64 // KV revision this copy was read or written at
}

// Eligible reports whether the member is owed a copy of CHAT seq s.
func (m *Membership) Eligible(s uint64) bool {
	return s > m.JoinCursor && (!m.Left() || s <= m.LeaveCursor)
}

// Left reports whether the hold was ended (its leave cursor may be 0: a
// leave before any post).
func (m *Membership) Left() bool { return m.State == StateLeft }

// Principal is the member's principal.
func (m *Membership) Principal() wire.Principal {
	p, _ := wire.ParsePrincipal(m.Owner)
	return p
}

// membershipKey is the members-bucket key: KV keys allow neither `*` nor
// `>`, and a channel may be a family, so the wildcard is spelled `=g`.
func membershipKey(p wire.Principal, uid, channel string) string {
	return membershipPrefix(p, uid) + strings.ReplaceAll(channel, ">", "=g")
}

// membershipPrefix starts the keys of every membership of one lifecycle.
func membershipPrefix(p wire.Principal, uid string) string {
	return "m." + p.Owner + "." + p.Actor + "." + uid + "."
}

// store holds every membership. The delivery service is the only writer
// of the members bucket (it holds the lease), so its memory is the truth
// and every change is written through to the bucket before it counts.
// Lock order: store.mu is a leaf.
type store struct {
	kv     jetstream.KeyValue
	writer string

	mu   sync.Mutex
	rows map[string]*Membership

	skipped []string // keys the last load found no membership under
}

func newStore(kv jetstream.KeyValue, writer string) *store {
	return &store{kv: kv, writer: writer, rows: map[string]*Membership{}}
}

// load reads every membership from the bucket.
func (s *store) load(ctx context.Context) error {
	lister, err := s.kv.ListKeys(ctx)
	if err != nil {
		return err
	}
	rows := map[string]*Membership{}
	s.skipped = nil
	for key := range lister.Keys() {
		ent, err := s.kv.Get(ctx, key)
		if err != nil {
			continue
		}
		var m Membership
		if json.Unmarshal(ent.Value(), &m) != nil || m.Owner == "" || membershipKey(m.Principal(), m.LifecycleUID, m.Channel) != key {
			s.skipped = append(s.skipped, key) // no row the service wrote
			continue
		}
		m.rev = ent.Revision()
		rows[key] = &m
	}
	s.mu.Lock()
	s.rows = rows
	s.mu.Unlock()
	return nil
}

// get returns a copy of one membership.
func (s *store) get(p wire.Principal, uid, channel string) (Membership, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.rows[membershipKey(p, uid, channel)]
	if !ok {
		return Membership{}, false
	}
	return *m, true
}

// put writes m with a compare-and-set on the revision it was read at;
// a lost race is an error (the caller re-reads and decides again).
func (s *store) put(ctx context.Context, m Membership) (Membership, error) {
	key := membershipKey(m.Principal(), m.LifecycleUID, m.Channel)
	m.WriterIdentity, m.UpdatedAt = s.writer, time.Now().UTC()
	b, _ := json.Marshal(m)
	var rev uint64
	var err error
	if m.rev == 0 {
		rev, err = s.kv.Create(ctx, key, b)
	} else {
		rev, err = s.kv.Update(ctx, key, b, m.rev)
	}
	if err != nil {
		return m, fmt.Errorf("writing membership %s: %w", key, err)
	}
	m.rev = rev
	s.mu.Lock()
	c := m
	s.rows[key] = &c
	s.mu.Unlock()
	return m, nil
}

// remember records m, read fresh from the bucket, as the truth.
func (s *store) remember(key string, m Membership) {
	s.mu.Lock()
	s.rows[key] = &m
	s.mu.Unlock()
}

// matching returns copies of the memberships whose channel (or family)
// covers a concrete channel.
func (s *store) matching(channel string) []Membership {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Membership
	for _, m := range s.rows {
		if wire.ChannelMatches(m.Channel, channel) {
			out = append(out, *m)
		}
	}
	return out
}

// of returns the memberships of one member lifecycle.
func (s *store) of(p wire.Principal, uid string) []Membership {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Membership
	for _, m := range s.rows {
		if m.Owner == p.ID() && m.LifecycleUID == uid {
			out = append(out, *m)
		}
	}
	return out
}

// owed reports whether any membership of the member covering channel is
// owed CHAT seq s.
func (s *store) owed(p wire.Principal, uid, channel string, seq uint64) bool {
	for _, m := range s.of(p, uid) {
		if wire.ChannelMatches(m.Channel, channel) && m.Eligible(seq) {
			return true
		}
	}
	return false
}
