package seat

import (
	"context"
	"errors"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// The self commands the seat's MCP server steers its connector through,

func (m *Manager) selfConnectorCommands() []ep.Command {
	self := []proto.Mode{proto.ModeSelf}
	return []ep.Command{
		{Name: wire.ManagerConnector, Modes: self, Input: proto.SchemaFor(struct{}{}), Output: proto.SchemaFor(mesh.ConnectorState{}), Capability: "self", Handler: m.selfConnector},
		{Name: wire.ManagerInboxWindow, Modes: self, Input: proto.SchemaFor(client.InboxWindowArgs{}), Output: proto.SchemaFor(mesh.Window{}), Capability: "self", Handler: m.selfInboxWindow},
		{Name: wire.ManagerSetAttention, Modes: self, Input: proto.SchemaFor(client.AttentionArgs{}), Output: proto.SchemaFor(mesh.PresenceState{}), Capability: "self", Handler: m.selfAttention},
		{Name: wire.ManagerChannelMode, Modes: self, Input: proto.SchemaFor(client.ChannelModeArgs{}), Output: proto.SchemaFor(client.ChannelModeReply{}), Capability: "self", Handler: m.selfChannelMode},
		{Name: wire.ManagerHello, Modes: self, Input: proto.SchemaFor(client.HelloArgs{}), Output: proto.SchemaFor(struct{}{}), Capability: "self", Handler: m.selfHello},
	}
}

func (m *Manager) selfConnector(_ context.Context, c *ep.Call) (any, *proto.Error) {
	conn, e := m.connector(c)
	if e != nil {
		return nil, e
	}
	return conn.State(), nil
}

func (m *Manager) selfInboxWindow(ctx context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.InboxWindowArgs
	conn, e := m.selfArgs(c, &a)
	if e != nil {
		return nil, e
	}
	w, err := conn.TakeWindow(ctx, mesh.InboxWindowChars, a.Peek)
	if err != nil {
		return nil, proto.Failed(proto.CodeUnavailable, "reading the inbox: %v", err)
	}
	return w, nil
}

func (m *Manager) selfAttention(_ context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.AttentionArgs
	conn, e := m.selfArgs(c, &a)
	if e != nil {
		return nil, e
	}
	if err := conn.SetAttention(presence.Attention(a.Attention)); err != nil {
		return nil, proto.Failed(proto.CodeInternal, "%v", err)
	}
	st := conn.State()
	if st.Presence == nil {
		return nil, proto.Failed(proto.CodeInternal, "the connector writes no presence")
	}
	return *st.Presence, nil
}

func (m *Manager) selfChannelMode(_ context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.ChannelModeArgs
	conn, e := m.selfArgs(c, &a)
	if e != nil {
		return nil, e
	}
	if err := conn.SetChannelMode(a.Channel, mesh.ChannelMode(a.Mode)); errors.Is(err, mesh.ErrBadChannelMode) {
		return nil, proto.Refuse(proto.CodeFailedPrecondition, "%v", err)
	} else if err != nil {
		return nil, proto.Failed(proto.CodeInternal, "the mode is set, but mirroring it to presence failed: %v", err)
	}
	modes := conn.ChannelModes()
	if modes == nil {
		modes = map[string]mesh.ChannelMode{}
	}
	return client.ChannelModeReply{Modes: modes}, nil
}

// selfHello is the seat's MCP server saying its client connected: the seat
// is ready (its readiness wait ends).
func (m *Manager) selfHello(_ context.Context, c *ep.Call) (any, *proto.Error) {
	s, e := m.seatOf(c.Caller())
	if e != nil {
		return nil, e
	}
	var a client.HelloArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	s.helloOnce.Do(func() { close(s.hello) })
	m.logf("seat %s: its MCP client connected (%s)", s.name, a.Client)
	return struct{}{}, nil
}
