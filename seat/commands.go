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
	"github.com/cotal-go/cotal/seat/pty"
)

// Schemas of the manager's commands: closed JSON Schema 2020-12 objects.
var (
	schemaSpawnIn = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["persona"],
		"properties":{"persona":{"type":"string","minLength":1,"maxLength":128},"name":{"type":"string","maxLength":64},
		"cwd":{"type":"string"},"role":{"type":"string","maxLength":64},"prompt":{"type":"string"}}}`)
	schemaSpawnOut = json.RawMessage(`{"type":"object","additionalProperties":false,
		"required":["name","owner","actor","uid","goalId","fingerprint","executor"],
		"properties":{"name":{"type":"string"},"owner":{"type":"string"},"actor":{"type":"string"},"uid":{"type":"string"},
		"goalId":{"type":"string"},"fingerprint":{"type":"string"},"readinessDeadlineMs":{"type":"integer"},
		"executor":{"type":"object","additionalProperties":false,"required":["lifecycleUid","epoch"],
			"properties":{"lifecycleUid":{"type":"string"},"epoch":{"type":"integer"}}}}}`)
	schemaName      = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["name"],"properties":{"name":{"type":"string","minLength":1}}}`)
	schemaDespawnIn = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["name"],
		"properties":{"name":{"type":"string","minLength":1},"graceful":{"type":"boolean"}}}`)
	schemaInputIn = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["name","text"],
		"properties":{"name":{"type":"string","minLength":1},"text":{"type":"string"},"enter":{"type":"boolean"}}}`)
	schemaAny     = json.RawMessage(`{"type":"object"}`)
	schemaInboxIn = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"peek":{"type":"boolean"}}}`)
	schemaStatus  = json.RawMessage(`{"type":"object","additionalProperties":false,
		"properties":{"status":{"enum":["idle","waiting","working"]},"activity":{"type":"string","maxLength":200}}}`)
	schemaChannel = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["channel"],"properties":{"channel":{"type":"string","minLength":1}}}`)
)

func (m *Manager) commands() []ep.Command {
	self := []ep.Mode{ep.ModeSelf}
	cmds := []ep.Command{
		{Name: "spawn", Input: schemaSpawnIn, Output: schemaSpawnOut, Capability: "spawn", Handler: m.spawn},
		{Name: "status", Output: schemaAny, Capability: "read", Handler: m.status},
		{Name: "ps", Output: schemaAny, Capability: "read", Handler: m.ps},
		{Name: "inspect", Input: schemaName, Output: schemaAny, Capability: "read", Handler: m.inspect},
		{Name: "screen", Input: schemaName, Output: schemaAny, Capability: "read", Handler: m.screenCmd},
		{Name: "despawn", Input: schemaDespawnIn, Output: schemaAny, Capability: "write", Handler: m.despawn},
		{Name: "input", Input: schemaInputIn, Output: schemaAny, Capability: "operator", Handler: m.input},
		{Name: "inbox", Modes: self, Input: schemaInboxIn, Output: schemaAny, Capability: "self", Handler: m.selfInbox},
		{Name: "set-status", Modes: self, Input: schemaStatus, Output: schemaAny, Capability: "self", Handler: m.selfStatus},
		{Name: "join", Modes: self, Input: schemaChannel, Output: schemaAny, Capability: "self", Handler: m.selfJoin},
		{Name: "leave", Modes: self, Input: schemaChannel, Output: schemaAny, Capability: "self", Handler: m.selfLeave},
	}
	// What the seat's MCP server needs of its connector (selfconnector.go).
	return append(cmds, m.selfConnectorCommands()...)
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

type nameArgs struct {
	Name string `json:"name"`
}

func (m *Manager) inspect(_ context.Context, c *ep.Call) (any, *ep.Error) {
	var a nameArgs
	_ = c.Decode(&a)
	s, e := m.seat(a.Name)
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
	var a nameArgs
	_ = c.Decode(&a)
	s, e := m.seat(a.Name)
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
	var a struct {
		Name     string `json:"name"`
		Graceful *bool  `json:"graceful"`
	}
	_ = c.Decode(&a)
	s, e := m.seat(a.Name)
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
	var a struct {
		Name  string `json:"name"`
		Text  string `json:"text"`
		Enter *bool  `json:"enter"`
	}
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
	var a struct {
		Peek bool `json:"peek"`
	}
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
		out = append(out, InboxItem{Kind: string(it.Kind), Line: mesh.Render(it, conn.Me()), Historical: it.Historical})
		if a.Peek {
			_ = it.Release()
		} else {
			_ = it.Ack()
		}
	}
	return map[string]any{"items": out}, nil
}

func (m *Manager) selfStatus(_ context.Context, c *ep.Call) (any, *ep.Error) {
	var a struct {
		Status   string  `json:"status"`
		Activity *string `json:"activity"`
	}
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
	return map[string]any{"status": rec.Status, "activity": rec.Activity}, nil
}

func (m *Manager) selfJoin(ctx context.Context, c *ep.Call) (any, *ep.Error) {
	var a struct {
		Channel string `json:"channel"`
	}
	conn, e := m.selfArgs(c, &a)
	if e != nil {
		return nil, e
	}
	r, err := conn.Join(ctx, a.Channel)
	if err != nil {
		return nil, ep.Refuse(ep.CodePermissionDenied, "%v", err)
	}
	return map[string]any{"joined": r.Joined, "durable": r.Durable, "summary": mesh.JoinSummary(r)}, nil
}

func (m *Manager) selfLeave(ctx context.Context, c *ep.Call) (any, *ep.Error) {
	var a struct {
		Channel string `json:"channel"`
	}
	conn, e := m.selfArgs(c, &a)
	if e != nil {
		return nil, e
	}
	left, err := conn.Leave(ctx, a.Channel)
	if err != nil {
		return nil, ep.Failed(ep.CodeUnavailable, "%v", err)
	}
	return map[string]any{"left": left}, nil
}
