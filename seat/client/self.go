package client

import (
	"context"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Self is what a seat's own process asks of its connector, through the
// manager that hosts it (COTAL_MANAGER_INSTANCE in the seat). The calls go
// in self mode: the broker vouches for the caller in the subject, and the
// manager acts on the caller's own seat only.
type Self struct {
	c       *Client
	manager string
}

// Self is the seat calls of the client's caller, a seat hosted by manager.
func (c *Client) Self(manager string) Self { return Self{c: c, manager: manager} }

func (s Self) call(ctx context.Context, command string, args, out any) error {
	_, err := s.c.call(ctx, command, args, out, ep.Self(), ep.On(s.manager))
	return err
}

// Inbox takes what the connector holds for the seat; with peek it stays
// there for the next read.
func (s Self) Inbox(ctx context.Context, peek bool) ([]InboxItem, error) {
	var r InboxReply
	err := s.call(ctx, wire.ManagerInbox, InboxArgs{Peek: peek}, &r)
	return r.Items, err
}

// InboxWindow is one inbox read as a model gets it (spec §12): at most
// mesh.InboxWindowChars characters, DMs and tasks first; it clears only
// what it returned, and with peek nothing.
func (s Self) InboxWindow(ctx context.Context, peek bool) (mesh.Window, error) {
	var w mesh.Window
	err := s.call(ctx, wire.ManagerInboxWindow, InboxWindowArgs{Peek: peek}, &w)
	return w, err
}

// SetStatus sets the seat's status and activity (each only when given) and
// returns its presence after.
func (s Self) SetStatus(ctx context.Context, a StatusArgs) (StatusSet, error) {
	var r StatusSet
	err := s.call(ctx, wire.ManagerSetStatus, a, &r)
	return r, err
}

// Join puts the seat on a channel.
func (s Self) Join(ctx context.Context, channel string) (JoinedReply, error) {
	var r JoinedReply
	err := s.call(ctx, wire.ManagerJoin, ChannelArgs{Channel: channel}, &r)
	return r, err
}

// Leave takes the seat off a channel; it reports whether it was on it.
func (s Self) Leave(ctx context.Context, channel string) (bool, error) {
	var r LeftReply
	err := s.call(ctx, wire.ManagerLeave, ChannelArgs{Channel: channel}, &r)
	return r.Left, err
}

// Stop stops the caller's own seat. The manager answers before it stops
// the seat, whose process (the caller among it) then ends.
func (s Self) Stop(ctx context.Context, graceful bool) (StopReply, error) {
	var r StopReply
	err := s.call(ctx, wire.ManagerStop, StopArgs{Graceful: &graceful}, &r)
	return r, err
}

// Hook hands one hook event of the seat's harness to its connector; the
// reply is what the hook prints.
func (s Self) Hook(ctx context.Context, a HookArgs) (HookReply, error) {
	var r HookReply
	err := s.call(ctx, wire.ManagerHook, a, &r)
	return r, err
}

// HookWait asks again for the answer a hook waits on.
func (s Self) HookWait(ctx context.Context, token string) (HookReply, error) {
	var r HookReply
	err := s.call(ctx, wire.ManagerHookWait, HookWaitArgs{Token: token}, &r)
	return r, err
}

// HookDone says how a hook ended: it wrote its output, or it was stopped.
func (s Self) HookDone(ctx context.Context, a HookDoneArgs) error {
	return s.call(ctx, wire.ManagerHookDone, a, &struct{}{})
}
