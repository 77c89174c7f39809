package seat

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/attach"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/pty"
)

// commands are the manager's commands. Each handler checks its caller
// against the identity records (authority.go) as well as the broker's
// grants: the operator for the census and typing, spawn-capable agents for
// spawn and, in owner mode, for the seats they spawned. The lifecycle
// commands are targeted in owner mode (the seat's spawner) and any mode
// (the operator, on any seat); the ones that were untargeted keep that
// form for the operator.
func (m *Manager) commands() []ep.Command {
	self := []proto.Mode{proto.ModeSelf}
	owned := []proto.Mode{proto.ModeNone, proto.ModeOwner, proto.ModeAny}
	// Typing into a seat is controlling it: targeted like attach and
	// despawn, and admitted to the operator alone (never minted to an
	// agent, and refused by the handler even so).
	typed := []proto.Mode{proto.ModeOwner, proto.ModeAny}
	cmds := []ep.Command{
		{Name: wire.ManagerSpawn, Input: schemaOf(client.SpawnArgs{}), Output: schemaOf(client.SpawnAccepted{}), Capability: "spawn", Authorize: m.maySpawn, Handler: m.spawn},
		{Name: wire.ManagerPersonas, Input: schemaOf(client.PersonasArgs{}), Output: schemaOf(client.PersonasReply{}), Capability: "spawn", Authorize: m.maySpawn, Handler: m.personas},
		{Name: wire.ManagerStatus, Output: schemaOf(client.StatusReply{}), Capability: "read", Authorize: m.operatorOnly, Handler: m.status},
		{Name: wire.ManagerPs, Output: schemaOf(client.PsReply{}), Capability: "read", Authorize: m.operatorOnly, Handler: m.ps},
		{Name: wire.ManagerInspect, Modes: owned, Input: schemaOf(client.NameArgs{}), Output: schemaOf(client.Row{}), Capability: "read", Authorize: m.mayOwn, Target: m.targetSeat, Handler: m.inspect},
		{Name: wire.ManagerScreen, Modes: owned, Input: schemaOf(client.ScreenArgs{}), Output: schemaOf(client.ScreenReply{}), Capability: "read", Authorize: m.mayOwn, Target: m.targetSeat, Handler: m.screenCmd},
		{Name: wire.ManagerDespawn, Modes: owned, Input: schemaOf(client.DespawnArgs{}), Output: schemaOf(client.Row{}), Capability: "write", Authorize: m.mayOwn, Target: m.targetSeat, Handler: m.despawn},
		{Name: wire.ManagerInput, Modes: typed, Input: schemaOf(client.InputArgs{}), Output: schemaOf(client.InputReply{}), Capability: "lifecycle", Authorize: m.mayType, Target: m.targetSeat, Handler: m.input},
		{Name: wire.ManagerKeys, Modes: typed, Input: schemaOf(client.KeysArgs{}), Output: schemaOf(client.InputReply{}), Capability: "lifecycle", Authorize: m.mayType, Target: m.targetSeat, Handler: m.keysCmd},
		{Name: wire.ManagerAttach, Modes: owned, Input: schemaOf(client.AttachArgs{}), Output: schemaOf(client.AttachReply{}), Capability: "lifecycle", Authorize: m.mayOwn, Target: m.targetSeat, Handler: m.attachCmd},
		{Name: wire.ManagerInbox, Modes: self, Input: schemaOf(client.InboxArgs{}), Output: schemaOf(client.InboxReply{}), Capability: "self", Handler: m.selfInbox},
		{Name: wire.ManagerSetStatus, Modes: self, Input: schemaOf(client.StatusArgs{}), Output: schemaOf(client.StatusSet{}), Capability: "self", Handler: m.selfStatus},
		{Name: wire.ManagerJoin, Modes: self, Input: schemaOf(client.ChannelArgs{}), Output: schemaOf(client.JoinedReply{}), Capability: "self", Handler: m.selfJoin},
		{Name: wire.ManagerLeave, Modes: self, Input: schemaOf(client.ChannelArgs{}), Output: schemaOf(client.LeftReply{}), Capability: "self", Handler: m.selfLeave},
		{Name: wire.ManagerStop, Modes: self, Input: schemaOf(client.StopArgs{}), Output: schemaOf(client.StopReply{}), Capability: "self", Handler: m.selfStop},
	}
	// What the seat's MCP server needs of its connector (selfconnector.go),
	// and what its harness's hooks report through (hook.go).
	cmds = append(cmds, m.selfConnectorCommands()...)
	return append(cmds, m.hookCommands()...)
}

// personas tells a spawner what it may spawn: never a prompt, an
// environment or a launch command.
func (m *Manager) personas(_ context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.PersonasArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	ps, err := DescribePersonas(m.opts.ProjectDir, a.Name)
	if err != nil {
		return nil, proto.Refuse(proto.CodeNotFound, "%v", err)
	}
	return client.PersonasReply{Personas: ps}, nil
}

func (m *Manager) status(context.Context, *ep.Call) (any, *proto.Error) {
	m.mu.Lock()
	n := len(m.seats)
	m.mu.Unlock()
	return client.StatusReply{Instance: m.iid, Epoch: m.server.Epoch(), Seats: n, Live: len(m.Live()), NowMs: time.Now().UnixMilli()}, nil
}

func (m *Manager) ps(context.Context, *ep.Call) (any, *proto.Error) {
	m.mu.Lock()
	seats := make([]*Seat, 0, len(m.seats))
	for _, s := range m.seats {
		seats = append(seats, s)
	}
	m.mu.Unlock()
	rows := make([]client.Row, 0, len(seats))
	for _, s := range seats {
		r := s.row()
		r.Sessions = m.sessionRows(r.Name)
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return client.PsReply{Instance: m.iid, Epoch: m.server.Epoch(), NowMs: time.Now().UnixMilli(), Seats: rows}, nil
}

// schemaOf is the closed schema of a command's arguments or reply.
func schemaOf(v any) json.RawMessage { return proto.SchemaFor(v) }

func (m *Manager) inspect(_ context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.NameArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	s, e := m.ownedSeat(c, a.Name)
	if e != nil {
		return nil, e
	}
	r := s.row()
	r.Sessions = m.sessionRows(r.Name)
	return r, nil
}

func (m *Manager) screenCmd(ctx context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.ScreenArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	if a.WaitMs > 0 && a.Until == "" {
		return nil, proto.Refuse(proto.CodeBadRequest, "waitMs without until: say what text to wait for")
	}
	s, e := m.ownedSeat(c, a.Name)
	if e != nil {
		return nil, e
	}
	if a.Until == "" {
		text, last, ok := s.screen()
		if !ok {
			return nil, proto.Refuse(proto.CodeFailedPrecondition, "seat %s has no screen: its process never started", a.Name)
		}
		return client.ScreenReply{Name: a.Name, Screen: text, Running: s.running(), LastOutputMs: ms(last)}, nil
	}
	wait := 10 * time.Second
	if a.WaitMs > 0 {
		wait = time.Duration(a.WaitMs) * time.Millisecond
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	text, last, matched, ok := s.waitScreen(wctx, a.Until)
	if !ok {
		return nil, proto.Refuse(proto.CodeFailedPrecondition, "seat %s has no screen: its process never started", a.Name)
	}
	return client.ScreenReply{Name: a.Name, Screen: text, Running: s.running(), LastOutputMs: ms(last), Matched: &matched}, nil
}

func (m *Manager) despawn(ctx context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.DespawnArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	s, e := m.ownedSeat(c, a.Name)
	if e != nil {
		return nil, e
	}
	if !s.running() {
		return nil, proto.Refuse(proto.CodeFailedPrecondition, "seat %s is not running", a.Name)
	}
	graceful := a.Graceful == nil || *a.Graceful
	m.endSessions(s.name, attach.ReasonTargetDespawn)
	if err := s.stop(ctx, graceful); err != nil {
		return nil, proto.Failed(proto.CodeInternal, "stopping %s: %v", a.Name, err)
	}
	return s.row(), nil
}

func (m *Manager) input(_ context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.InputArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	s, e := m.ownedSeat(c, a.Name)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	p := s.pty
	s.mu.Unlock()
	if p == nil || !p.Running() {
		return nil, proto.Refuse(proto.CodeFailedPrecondition, "seat %s is not running; nothing was written", a.Name)
	}
	enter := a.Enter == nil || *a.Enter
	n, err := p.Paste(a.Text, enter)
	if errors.Is(err, pty.ErrNotRunning) {
		return nil, proto.Refuse(proto.CodeFailedPrecondition, "seat %s exited; nothing was written", a.Name)
	}
	if err != nil {
		return nil, proto.Failed(proto.CodeInternal, "writing to %s: %v (%d bytes accepted)", a.Name, err, n)
	}
	// The pty accepted everything: report the text and the Enter, not the
	// paste markers a program may have asked for (spec §13).
	bytes := len(a.Text)
	if enter {
		bytes++
	}
	return client.InputReply{Name: a.Name, Bytes: bytes}, nil
}

// connector is the seat's connector for a self-mode caller.
func (m *Manager) connector(c *ep.Call) (*mesh.Endpoint, *proto.Error) {
	s, e := m.seatOf(c.Caller())
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil, proto.Refuse(proto.CodeUnavailable, "seat %s is not on the mesh (%s)", s.name, s.state)
	}
	return s.conn, nil
}

// selfArgs finds the self-mode caller's connector and decodes its args.
func (m *Manager) selfArgs(c *ep.Call, args any) (*mesh.Endpoint, *proto.Error) {
	conn, e := m.connector(c)
	if e != nil {
		return nil, e
	}
	if e := c.Decode(args); e != nil {
		return nil, e
	}
	return conn, nil
}

func (m *Manager) selfInbox(ctx context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.InboxArgs
	conn, e := m.selfArgs(c, &a)
	if e != nil {
		return nil, e
	}
	items, err := conn.Collect(ctx, 0)
	if err != nil {
		return nil, proto.Failed(proto.CodeUnavailable, "reading the inbox: %v", err)
	}
	out := make([]client.InboxItem, 0, len(items))
	for _, it := range items {
		out = append(out, client.InboxItem{Kind: string(it.Kind), Line: render.Item(it.Kind, it.Subject, it.Msg, it.Historical, conn.Me()), Historical: it.Historical})
		if a.Peek {
			_ = it.Release()
		} else {
			_ = it.Ack()
		}
	}
	return client.InboxReply{Items: out}, nil
}

func (m *Manager) selfStatus(_ context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.StatusArgs
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
		return nil, proto.Failed(proto.CodeInternal, "%v", err)
	}
	rec, _ = conn.PresenceRecord()
	return client.StatusSet{Status: string(rec.Status), Activity: rec.Activity}, nil
}

func (m *Manager) selfJoin(ctx context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.ChannelArgs
	conn, e := m.selfArgs(c, &a)
	if e != nil {
		return nil, e
	}
	r, err := conn.Join(ctx, a.Channel)
	if err != nil {
		return nil, joinFailure(err)
	}
	return client.JoinedReply{Joined: r.Joined, Durable: r.Durable, Summary: mesh.JoinSummary(r)}, nil
}

func (m *Manager) selfLeave(ctx context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.ChannelArgs
	conn, e := m.selfArgs(c, &a)
	if e != nil {
		return nil, e
	}
	left, err := conn.Leave(ctx, a.Channel)
	if err != nil {
		return nil, proto.Failed(proto.CodeUnavailable, "%v", err)
	}
	return client.LeftReply{Left: left}, nil
}

// joinFailure is a seat's failed join as its caller reads it: a channel
// outside its read ACL is denied and a name that is no channel is bad
// input, neither having run; a connector that is closing is unavailable;
// anything else (the mesh not answering, a refusal from the delivery
// service, which says itself) is no refusal of the caller, and may have
// left the join half made.
func joinFailure(err error) *proto.Error {
	switch {
	case errors.Is(err, mesh.ErrNotInReadACL):
		return proto.Refuse(proto.CodePermissionDenied, "%v", err)
	case errors.Is(err, wire.ErrInvalidChannel):
		return proto.Refuse(proto.CodeBadRequest, "%v", err)
	case errors.Is(err, mesh.ErrClosed):
		return proto.Refuse(proto.CodeUnavailable, "the seat's connector is closing: %v", err)
	}
	if e := proto.AsError(err); e != nil {
		return e
	}
	return &proto.Error{Code: proto.CodeUnavailable, Message: err.Error(), Outcome: proto.Unknown}
}

// WarmSchemas compiles the manager's contracts ahead of its start
// (ep.WarmSchemas); no handler runs.
func WarmSchemas() { ep.WarmSchemas((&Manager{}).commands()) }
