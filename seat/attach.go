package seat

import (
	"context"
	"errors"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/attach"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/pty"
)

// openSessions makes the attach registry of this incarnation; it runs once
// Start has committed the epoch, which every grant is pinned to.
func (m *Manager) openSessions() error {
	reg, err := attach.NewRegistry(attach.RegistryOptions{
		Space: m.opts.Space, Endpoint: wire.ManagerEndpoint, MaxSessions: m.opts.MaxSessions,
		Serving: attach.Serving{InstanceID: m.iid, Epoch: m.server.Epoch()},
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.sessions = reg
	m.mu.Unlock()
	return nil
}

func (m *Manager) sessionRegistry() (*attach.Registry, *proto.Error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sessions == nil {
		return nil, proto.Refuse(proto.CodeUnavailable, "manager %s is still starting; attach again in a moment", m.iid)
	}
	return m.sessions, nil
}

// attachCmd offers the caller a session on a seat (the operator, or in
// owner mode the agent that spawned it), redeems it for that caller and
// serves it, then replies with the grant alone: the session's rail is
// subscribed before the caller hears of it (spec §12, static mode).
func (m *Manager) attachCmd(ctx context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.AttachArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	s, e := m.ownedSeat(c, a.Name)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	p, term := s.pty, s.term
	s.mu.Unlock()
	if p == nil || term == nil || !p.Running() {
		return nil, proto.Refuse(proto.CodeFailedPrecondition, "seat %s is not running; there is no terminal to attach to", a.Name)
	}
	reg, e := m.sessionRegistry()
	if e != nil {
		return nil, e
	}
	holder := attach.HolderOf(c.Caller(), 0)
	g, err := reg.Offer(attach.Target{Name: s.name, LifecycleUID: s.uid}, holder)
	if err != nil {
		return nil, asEpError(err)
	}
	raw, err := g.Marshal()
	if err != nil {
		return nil, proto.Failed(proto.CodeInternal, "encoding the grant: %v", err)
	}
	if _, _, err := reg.Redeem(raw, holder); err != nil {
		return nil, asEpError(err)
	}
	// The context bounds only the rail's setup: the session outlives this
	// call and ends with its holder, its seat, its grant or this manager.
	if _, err := reg.Serve(ctx, m.opts.Conn, g, term); err != nil {
		return nil, asEpError(err)
	}
	return client.AttachReply{Grant: raw}, nil
}

func asEpError(err error) *proto.Error {
	var e *proto.Error
	if errors.As(err, &e) {
		return e
	}
	return proto.Failed(proto.CodeInternal, "%v", err)
}

// keysCmd types named keys into a seat raw, as a person's keyboard would
// (no paste markers): what answers a prompt or leaves an editor. Operator
// only and targeted, like input.
func (m *Manager) keysCmd(_ context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.KeysArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	if _, err := pty.ParseKeys(a.Keys...); err != nil {
		return nil, proto.Refuse(proto.CodeBadRequest, "%v; nothing was written", err)
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
	n, err := p.Keys(a.Keys...)
	if errors.Is(err, pty.ErrNotRunning) {
		return nil, proto.Refuse(proto.CodeFailedPrecondition, "seat %s exited; nothing was written", a.Name)
	}
	if err != nil {
		return nil, proto.Failed(proto.CodeInternal, "writing to %s: %v (%d bytes accepted)", a.Name, err, n)
	}
	return client.InputReply{Name: a.Name, Bytes: n}, nil
}

// sessionRows are the sessions attached to a seat, for ps.
func (m *Manager) sessionRows(name string) []client.SessionRow {
	m.mu.Lock()
	reg := m.sessions
	m.mu.Unlock()
	if reg == nil {
		return nil
	}
	var out []client.SessionRow
	for _, st := range reg.Sessions(name) {
		if !st.Live {
			continue
		}
		out = append(out, client.SessionRow{ID: st.ID, Holder: st.Holder.ID, SinceMs: st.Since.UnixMilli(), BytesOut: st.BytesOut, Dropped: st.Dropped, Live: st.Live})
	}
	return out
}

// endSessions ends a seat's sessions (it is being stopped) or all of them
// (the manager is closing).
func (m *Manager) endSessions(name string, reason attach.Reason) {
	m.mu.Lock()
	reg := m.sessions
	m.mu.Unlock()
	if reg == nil {
		return
	}
	if name == "" {
		reg.Close(reason)
		return
	}
	reg.EndTarget(name, reason)
}
