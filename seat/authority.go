package seat

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// Profiles and capabilities the manager's handlers check (the credential
// minter names them; the manager never imports it).
const (
	capSpawn      = "spawn"
	capRolePrefix = "role:"
)

// callerRecord is who calls, as the space's identity records say: a
// lifecycle the space minted and still names as current. The broker pins
// the triple in the subject; this refuses a triple no credential was minted
// for (a forged or replayed request), or one replaced or retired since. An
// open mesh keeps no records and makes no security claim: it passes as the
// operator. A caller the manager's copy of the records holds as current is
// answered from it (identities.go); any other is read live.
func (m *Manager) callerRecord(ctx context.Context, c proto.Caller) (wire.IdentityRecord, *proto.Error) {
	if m.opts.Open {
		return wire.IdentityRecord{ID: c.ID(), Profile: wire.ProfileOperator, LifecycleUID: c.UID}, nil
	}
	if rec, ok := m.ids.current(c.Principal(), c.UID); ok {
		return rec, nil
	}
	kv, err := m.recordsKV(ctx)
	if err != nil {
		return wire.IdentityRecord{}, proto.Refuse(proto.CodeUnavailable, "reading the identity records: %v", err)
	}
	ent, err := kv.Get(ctx, wire.IdentityKey(c.Principal()))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return wire.IdentityRecord{}, proto.Refuse(proto.CodePermissionDenied, "%s is not an identity of space %s", c.ID(), m.opts.Space)
	}
	if err != nil {
		return wire.IdentityRecord{}, proto.Refuse(proto.CodeUnavailable, "reading the identity of %s: %v", c.ID(), err)
	}
	var rec wire.IdentityRecord
	if err := json.Unmarshal(ent.Value(), &rec); err != nil || rec.ID != c.ID() {
		return wire.IdentityRecord{}, proto.Refuse(proto.CodeUnavailable, "the identity record of %s is not valid", c.ID())
	}
	if !rec.Current(c.UID) {
		return wire.IdentityRecord{}, proto.Refuse(proto.CodePermissionDenied, "lifecycle %s of %s has ended or was never minted", c.UID, c.ID())
	}
	return rec, nil
}

func (m *Manager) recordsKV(ctx context.Context) (jetstream.KeyValue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.records != nil {
		return m.records, nil
	}
	js, err := jetstream.New(m.opts.Conn)
	if err != nil {
		return nil, err
	}
	kv, err := js.KeyValue(ctx, wire.RecordsBucket(m.opts.Space))
	if err != nil {
		return nil, err
	}
	m.records = kv
	return kv, nil
}

// operatorOnly admits the space's operator and no one else: the broker
// grants these commands to no agent, and the handler does not rely on that.
func (m *Manager) operatorOnly(ctx context.Context, c *ep.Call) *proto.Error {
	rec, e := m.callerRecord(ctx, c.Caller())
	if e != nil {
		return e
	}
	if rec.Profile != wire.ProfileOperator {
		return proto.Refuse(proto.CodePermissionDenied, "%s may not call %s: it takes the operator", c.Caller().ID(), c.Request.Op.Command)
	}
	return nil
}

// mayType admits the operator alone to type into a seat, in owner mode
// (the seats it spawned) or any mode (every seat). The broker mints the
// command to no agent; this does not rely on that.
func (m *Manager) mayType(ctx context.Context, c *ep.Call) *proto.Error {
	rec, e := m.callerRecord(ctx, c.Caller())
	if e != nil {
		return e
	}
	if rec.Profile != wire.ProfileOperator {
		return proto.Refuse(proto.CodePermissionDenied, "%s; %s is not the operator (typing into a seat is controlling it)", client.OnlyOperatorTypes, c.Caller().ID())
	}
	return nil
}

// mayOwn admits the operator untargeted and in any mode, and in owner mode
// a spawn-capable agent: which seat it may act on is checked by the
// handler (only one it spawned).
func (m *Manager) mayOwn(ctx context.Context, c *ep.Call) *proto.Error {
	if c.Subject.Mode != proto.ModeOwner {
		return m.operatorOnly(ctx, c)
	}
	rec, e := m.callerRecord(ctx, c.Caller())
	if e != nil {
		return e
	}
	if rec.Profile != wire.ProfileOperator && !rec.Can(capSpawn) {
		return proto.Refuse(proto.CodePermissionDenied, "%s may not act on seats: its persona needs capabilities: [spawn]", c.Caller().ID())
	}
	return nil
}

// maySpawn admits the operator and agents minted with the spawn capability.
func (m *Manager) maySpawn(ctx context.Context, c *ep.Call) *proto.Error {
	rec, e := m.callerRecord(ctx, c.Caller())
	if e != nil {
		return e
	}
	if rec.Profile != wire.ProfileOperator && !rec.Can(capSpawn) {
		return proto.Refuse(proto.CodePermissionDenied, "%s isn't allowed to spawn: its persona needs capabilities: [spawn]", c.Caller().ID())
	}
	return nil
}

// ownedSeat finds the seat an owner-mode call targets and checks the caller
// spawned it; the operator may act on any seat.
func (m *Manager) ownedSeat(c *ep.Call, name string) (*Seat, *proto.Error) {
	s, e := m.seat(name)
	if e != nil {
		return nil, e
	}
	if c.Subject.Mode == proto.ModeOwner && s.spawner != c.Caller() {
		return nil, proto.Refuse(proto.CodePermissionDenied, "%s did not spawn seat %s; only its spawner or the operator may act on it", c.Caller().ID(), name)
	}
	return s, nil
}

// targetSeat checks a targeted call's body target names a seat of this
// manager in its current lifecycle (a stale actor or uid is expired) and
// that the args name the same seat.
func (m *Manager) targetSeat(_ context.Context, c *ep.Call) *proto.Error {
	t := c.Request.Target
	var a client.NameArgs
	if e := c.Decode(&a); e != nil {
		return e
	}
	if t.Actor != a.Name {
		return proto.Refuse(proto.CodeTargetMismatch, "the body target %s.%s is not the seat named %q", t.Owner, t.Actor, a.Name)
	}
	s, e := m.seat(a.Name)
	if e != nil {
		return e
	}
	if s.id.Owner != t.Owner || s.uid != t.LifecycleUID {
		return proto.Refuse(proto.CodeExpired, "seat %s is now lifecycle %s, not %s", a.Name, s.uid, t.LifecycleUID)
	}
	return nil
}
