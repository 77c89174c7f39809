package seat

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/seat/pty"
)

// The manager's command arguments and replies. Each command's closed JSON
// Schema is generated from these structs (ep.SchemaFor), so a contract
// cannot drift from what its handler decodes and returns.

// NameArgs names one seat.
type NameArgs struct {
	Name string `json:"name" schema:"minLength=1,maxLength=64"`
}

// DespawnArgs stops a seat: gracefully (SIGTERM, SIGKILL after 3 s) unless
// Graceful is false.
type DespawnArgs struct {
	Name     string `json:"name" schema:"minLength=1,maxLength=64"`
	Graceful *bool  `json:"graceful,omitempty"`
}

// MaxInput bounds the text of one input (spec control.md item 58).
const MaxInput = 65536

// InputArgs types text into a seat, then Enter unless Enter is false.
type InputArgs struct {
	Name  string `json:"name" schema:"minLength=1,maxLength=64"`
	Text  string `json:"text" schema:"minLength=1,maxLength=65536"`
	Enter *bool  `json:"enter,omitempty"`
}

// InboxArgs reads the seat's own inbox; Peek gives everything back.
type InboxArgs struct {
	Peek bool `json:"peek,omitempty"`
}

// InboxReply is what the seat's connector handed over.
type InboxReply struct {
	Items []InboxItem `json:"items"`
}

// StatusArgs sets the seat's own status and activity.
type StatusArgs struct {
	Status   string  `json:"status,omitempty" schema:"enum=idle|waiting|working"`
	Activity *string `json:"activity,omitempty" schema:"maxLength=200"`
}

// StatusSet is the seat's presence after a set-status.
type StatusSet struct {
	Status   string `json:"status"`
	Activity string `json:"activity"`
}

// ChannelArgs names a channel to join or leave.
type ChannelArgs struct {
	Channel string `json:"channel" schema:"minLength=1,maxLength=4096"`
}

// JoinedReply says how a seat's join went.
type JoinedReply struct {
	Joined  bool   `json:"joined"`
	Durable bool   `json:"durable"`
	Summary string `json:"summary"`
}

// LeftReply says whether the seat was on the channel.
type LeftReply struct {
	Left bool `json:"left"`
}

// commands are the manager's commands. Each handler checks its caller
// against the identity records (authority.go) as well as the broker's
// grants: the operator for the census and typing, spawn-capable agents for
// spawn and, in owner mode, for the seats they spawned.
func (m *Manager) commands() []ep.Command {
	self := []ep.Mode{ep.ModeSelf}
	owned := []ep.Mode{ep.ModeNone, ep.ModeOwner}
	return []ep.Command{
		{Name: "spawn", Input: schemaOf(SpawnArgs{}), Output: schemaOf(SpawnAccepted{}), Capability: "spawn", Authorize: m.maySpawn, Handler: m.spawn},
		{Name: "status", Output: schemaOf(StatusReply{}), Capability: "read", Authorize: m.operatorOnly, Handler: m.status},
		{Name: "ps", Output: schemaOf(PsReply{}), Capability: "read", Authorize: m.operatorOnly, Handler: m.ps},
		{Name: "inspect", Modes: owned, Input: schemaOf(NameArgs{}), Output: schemaOf(Row{}), Capability: "read", Authorize: m.mayOwn, Target: m.targetSeat, Handler: m.inspect},
		{Name: "screen", Modes: owned, Input: schemaOf(NameArgs{}), Output: schemaOf(ScreenReply{}), Capability: "read", Authorize: m.mayOwn, Target: m.targetSeat, Handler: m.screenCmd},
		{Name: "despawn", Modes: owned, Input: schemaOf(DespawnArgs{}), Output: schemaOf(Row{}), Capability: "write", Authorize: m.mayOwn, Target: m.targetSeat, Handler: m.despawn},
		{Name: "input", Input: schemaOf(InputArgs{}), Output: schemaOf(InputReply{}), Capability: "operator", Authorize: m.operatorOnly, Handler: m.input},
		{Name: "inbox", Modes: self, Input: schemaOf(InboxArgs{}), Output: schemaOf(InboxReply{}), Capability: "self", Handler: m.selfInbox},
		{Name: "set-status", Modes: self, Input: schemaOf(StatusArgs{}), Output: schemaOf(StatusSet{}), Capability: "self", Handler: m.selfStatus},
		{Name: "join", Modes: self, Input: schemaOf(ChannelArgs{}), Output: schemaOf(JoinedReply{}), Capability: "self", Handler: m.selfJoin},
		{Name: "leave", Modes: self, Input: schemaOf(ChannelArgs{}), Output: schemaOf(LeftReply{}), Capability: "self", Handler: m.selfLeave},
	}
}

// StatusReply is the manager's own state.
type StatusReply struct {
	Instance string `json:"instance"`
	Epoch    uint64 `json:"epoch"`
	Seats    int    `json:"seats"`
	Live     int    `json:"live"`
	NowMs    int64  `json:"nowMs"`
}

func (m *Manager) status(context.Context, *ep.Call) (any, *ep.Error) {
	m.mu.Lock()
	n := len(m.seats)
	m.mu.Unlock()
	return StatusReply{Instance: m.iid, Epoch: m.server.Epoch(), Seats: n, Live: len(m.Live()), NowMs: time.Now().UnixMilli()}, nil
}

// PsReply is one manager's census.
type PsReply struct {
	Instance string `json:"instance"`
	Epoch    uint64 `json:"epoch"`
	NowMs    int64  `json:"nowMs"` // the manager's clock, so ages are read against it
	Seats    []Row  `json:"seats"`
}

func (m *Manager) ps(context.Context, *ep.Call) (any, *ep.Error) {
	m.mu.Lock()
	seats := make([]*Seat, 0, len(m.seats))
	for _, s := range m.seats {
		seats = append(seats, s)
	}
	m.mu.Unlock()
	rows := make([]Row, 0, len(seats))
	for _, s := range seats {
		rows = append(rows, s.row())
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return PsReply{Instance: m.iid, Epoch: m.server.Epoch(), NowMs: time.Now().UnixMilli(), Seats: rows}, nil
}

// schemaOf is the closed schema of a command's arguments or reply.
func schemaOf(v any) json.RawMessage { return ep.SchemaFor(v) }

func (m *Manager) inspect(_ context.Context, c *ep.Call) (any, *ep.Error) {
	var a NameArgs
	_ = c.Decode(&a)
	s, e := m.ownedSeat(c, a.Name)
	if e != nil {
		return nil, e
	}
	return s.row(), nil
}

// ScreenReply is a seat's current screen as text.
type ScreenReply struct {
	Name         string `json:"name"`
	Screen       string `json:"screen"`
	Running      bool   `json:"running"`
	LastOutputMs int64  `json:"lastOutputMs,omitempty"`
}

func (m *Manager) screenCmd(_ context.Context, c *ep.Call) (any, *ep.Error) {
	var a NameArgs
	_ = c.Decode(&a)
	s, e := m.ownedSeat(c, a.Name)
	if e != nil {
		return nil, e
	}
	text, last, ok := s.screen()
	if !ok {
		return nil, ep.Refuse(ep.CodeFailedPrecondition, "seat %s has no screen: its process never started", a.Name)
	}
	return ScreenReply{Name: a.Name, Screen: text, Running: s.running(), LastOutputMs: ms(last)}, nil
}

func (m *Manager) despawn(ctx context.Context, c *ep.Call) (any, *ep.Error) {
	var a DespawnArgs
	_ = c.Decode(&a)
	s, e := m.ownedSeat(c, a.Name)
	if e != nil {
		return nil, e
	}
	if !s.running() {
		return nil, ep.Refuse(ep.CodeFailedPrecondition, "seat %s is not running", a.Name)
	}
	graceful := a.Graceful == nil || *a.Graceful
	if err := s.stop(ctx, graceful); err != nil {
		return nil, ep.Failed(ep.CodeInternal, "stopping %s: %v", a.Name, err)
	}
	return s.row(), nil
}

// InputReply says how many bytes the seat's pty accepted.
type InputReply struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

func (m *Manager) input(_ context.Context, c *ep.Call) (any, *ep.Error) {
	var a InputArgs
	_ = c.Decode(&a)
	s, e := m.seat(a.Name)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	p := s.pty
	s.mu.Unlock()
	if p == nil || !p.Running() {
		return nil, ep.Refuse(ep.CodeFailedPrecondition, "seat %s is not running; nothing was written", a.Name)
	}
	enter := a.Enter == nil || *a.Enter
	n, err := p.Paste(a.Text, enter)
	if errors.Is(err, pty.ErrNotRunning) {
		return nil, ep.Refuse(ep.CodeFailedPrecondition, "seat %s exited; nothing was written", a.Name)
	}
	if err != nil {
		return nil, ep.Failed(ep.CodeInternal, "writing to %s: %v (%d bytes accepted)", a.Name, err, n)
	}
	// The pty accepted everything: report the text and the Enter, not the
	// paste markers a program may have asked for (spec §13).
	bytes := len(a.Text)
	if enter {
		bytes++
	}
	return InputReply{Name: a.Name, Bytes: bytes}, nil
}

// connector is the seat's connector for a self-mode caller.
func (m *Manager) connector(c *ep.Call) (*mesh.Endpoint, *ep.Error) {
	s, e := m.seatOf(c.Caller())
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil, ep.Refuse(ep.CodeUnavailable, "seat %s is not on the mesh (%s)", s.name, s.state)
	}
	return s.conn, nil
}

// selfArgs finds the self-mode caller's connector and decodes its args.
func (m *Manager) selfArgs(c *ep.Call, args any) (*mesh.Endpoint, *ep.Error) {
	conn, e := m.connector(c)
	if e != nil {
		return nil, e
	}
	_ = c.Decode(args) // already validated against the command's schema
	return conn, nil
}

// InboxItem is one item handed to a seat's own inbox read.
type InboxItem struct {
	Kind       string `json:"kind"`
	Line       string `json:"line"` // rendered so peer text cannot forge a line
	Historical bool   `json:"historical,omitempty"`
}

func (m *Manager) selfInbox(ctx context.Context, c *ep.Call) (any, *ep.Error) {
	var a InboxArgs
	conn, e := m.selfArgs(c, &a)
	if e != nil {
		return nil, e
	}
	items, err := conn.Collect(ctx, 0)
	if err != nil {
		return nil, ep.Failed(ep.CodeUnavailable, "reading the inbox: %v", err)
	}
	out := make([]InboxItem, 0, len(items))
	for _, it := range items {
		out = append(out, InboxItem{Kind: string(it.Kind), Line: render.Item(it.Kind, it.Subject, it.Msg, it.Historical, conn.Me()), Historical: it.Historical})
		if a.Peek {
			_ = it.Release()
		} else {
			_ = it.Ack()
		}
	}
	return InboxReply{Items: out}, nil
}

func (m *Manager) selfStatus(_ context.Context, c *ep.Call) (any, *ep.Error) {
	var a StatusArgs
	conn, e := m.selfArgs(c, &a)
	if e != nil {
		return nil, e
	}
	rec, _ := conn.PresenceRecord()
	st, act := rec.Status, rec.Activity
	if a.Status != "" {
		st = presence.Status(a.Status)
	}
	if a.Activity != nil {
		act = *a.Activity
	}
	if err := conn.SetStatus(st, act); err != nil {
		return nil, ep.Failed(ep.CodeInternal, "%v", err)
	}
	rec, _ = conn.PresenceRecord()
	return StatusSet{Status: string(rec.Status), Activity: rec.Activity}, nil
}

func (m *Manager) selfJoin(ctx context.Context, c *ep.Call) (any, *ep.Error) {
	var a ChannelArgs
	conn, e := m.selfArgs(c, &a)
	if e != nil {
		return nil, e
	}
	r, err := conn.Join(ctx, a.Channel)
	if err != nil {
		return nil, ep.Refuse(ep.CodePermissionDenied, "%v", err)
	}
	return JoinedReply{Joined: r.Joined, Durable: r.Durable, Summary: mesh.JoinSummary(r)}, nil
}

func (m *Manager) selfLeave(ctx context.Context, c *ep.Call) (any, *ep.Error) {
	var a ChannelArgs
	conn, e := m.selfArgs(c, &a)
	if e != nil {
		return nil, e
	}
	left, err := conn.Leave(ctx, a.Channel)
	if err != nil {
		return nil, ep.Failed(ep.CodeUnavailable, "%v", err)
	}
	return LeftReply{Left: left}, nil
}
