package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// connector is where an identity's state lives: its channels and their
// modes, its presence and its inbox. Standalone it is the agent's own
// endpoint (whose stored messages the delivery service reads for it);
// inside a seat it is the seat's connector in the manager, reached through
// the manager's self commands. The tools behave the same over either.
type connector interface {
	state(ctx context.Context) (mesh.ConnectorState, error)
	window(ctx context.Context, peek bool) (mesh.Window, error)
	// setStatus changes the status (when not "") and the activity (when
	// not nil), keeping the other.
	setStatus(ctx context.Context, status string, activity *string) error
	setAttention(ctx context.Context, a presence.Attention) error
	setChannelMode(ctx context.Context, channel string, mode mesh.ChannelMode) error
	join(ctx context.Context, channel string) (joinOutcome, error)
	leave(ctx context.Context, channel string) (bool, error)
	// where says, for the model, what holds its state.
	where() string
}

// joinOutcome is what a join did.
type joinOutcome struct {
	Joined  bool   `json:"joined"`
	Durable bool   `json:"durable"`
	Summary string `json:"summary"`
}

// localConnector is the agent's own endpoint.
type localConnector struct{ e *mesh.Endpoint }

func (c localConnector) where() string {
	if c.e.State().Profile == wire.ProfileAgent {
		return "your own connection to the mesh (the mesh's delivery service keeps your stored messages until you read them)"
	}
	return "your own connection to the mesh"
}

func (c localConnector) state(context.Context) (mesh.ConnectorState, error) { return c.e.State(), nil }

func (c localConnector) window(ctx context.Context, peek bool) (mesh.Window, error) {
	return c.e.TakeWindow(ctx, mesh.InboxWindowChars, peek)
}

func (c localConnector) setStatus(_ context.Context, status string, activity *string) error {
	rec, _ := c.e.PresenceRecord()
	st, act := rec.Status, rec.Activity
	if st == "" || st == presence.Offline {
		st = presence.Idle
	}
	if status != "" {
		st = presence.Status(status)
	}
	if activity != nil {
		act = *activity
	}
	return c.e.SetStatus(st, act)
}

func (c localConnector) setAttention(_ context.Context, a presence.Attention) error {
	return c.e.SetAttention(a)
}

func (c localConnector) setChannelMode(_ context.Context, channel string, mode mesh.ChannelMode) error {
	return c.e.SetChannelMode(channel, mode)
}

func (c localConnector) join(ctx context.Context, channel string) (joinOutcome, error) {
	r, err := c.e.Join(ctx, channel)
	if err != nil {
		return joinOutcome{}, err
	}
	return joinOutcome{Joined: r.Joined, Durable: r.Durable, Summary: joinSummary(r)}, nil
}

func (c localConnector) leave(ctx context.Context, channel string) (bool, error) {
	return c.e.Leave(ctx, channel)
}

// seatConnector is a seat's connector in its manager, called in self
// mode: the broker vouches for the seat as the caller.
type seatConnector struct {
	client  *ep.Client
	manager string
}

func newSeatConnector(e *mesh.Endpoint, manager string) (*seatConnector, error) {
	me := e.Me()
	c, err := ep.NewClient(e.Conn(), ep.ClientOptions{
		Space:      e.Space(),
		Caller:     proto.Caller{Owner: me.Owner, Actor: me.Actor, UID: e.LifecycleUID()},
		From:       proto.From{ID: me.ID(), Name: e.Card().Name, Role: e.Role()},
		SharedConn: true, // the endpoint owns the connection's error handler
	})
	if err != nil {
		return nil, err
	}
	return &seatConnector{client: c, manager: manager}, nil
}

func (c *seatConnector) where() string {
	return "your seat's connector on manager " + c.manager
}

// selfCallTimeout bounds one call to the seat's connector.
const selfCallTimeout = 10 * time.Second

func (c *seatConnector) call(ctx context.Context, command string, args, out any) error {
	r, err := c.client.Call(ctx, wire.ManagerEndpoint, command, args, ep.Self(), ep.On(c.manager), ep.Timeout(selfCallTimeout))
	if err != nil {
		if e := proto.AsError(err); e != nil {
			if e.Code == proto.CodeUnavailable || e.Code == proto.CodeDeadlineExceeded {
				return fmt.Errorf("your seat's connector (manager %s) did not answer: %s", c.manager, e.Message)
			}
			return errors.New(e.Message)
		}
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		return fmt.Errorf("the manager answered %s with something unreadable: %w", command, err)
	}
	return nil
}

func (c *seatConnector) state(ctx context.Context) (mesh.ConnectorState, error) {
	var s mesh.ConnectorState
	err := c.call(ctx, wire.ManagerConnector, struct{}{}, &s)
	return s, err
}

func (c *seatConnector) window(ctx context.Context, peek bool) (mesh.Window, error) {
	var w mesh.Window
	err := c.call(ctx, wire.ManagerInboxWindow, client.InboxWindowArgs{Peek: peek}, &w)
	return w, err
}

func (c *seatConnector) setStatus(ctx context.Context, status string, activity *string) error {
	a := map[string]any{}
	if status != "" {
		a["status"] = status
	}
	if activity != nil {
		a["activity"] = *activity
	}
	return c.call(ctx, "set-status", a, nil)
}

func (c *seatConnector) setAttention(ctx context.Context, a presence.Attention) error {
	return c.call(ctx, wire.ManagerSetAttention, client.AttentionArgs{Attention: string(a)}, nil)
}

func (c *seatConnector) setChannelMode(ctx context.Context, channel string, mode mesh.ChannelMode) error {
	return c.call(ctx, wire.ManagerChannelMode, client.ChannelModeArgs{Channel: channel, Mode: string(mode)}, nil)
}

func (c *seatConnector) join(ctx context.Context, channel string) (joinOutcome, error) {
	var o joinOutcome
	err := c.call(ctx, "join", map[string]string{"channel": channel}, &o)
	return o, err
}

func (c *seatConnector) leave(ctx context.Context, channel string) (bool, error) {
	var r struct {
		Left bool `json:"left"`
	}
	err := c.call(ctx, "leave", map[string]string{"channel": channel}, &r)
	return r.Left, err
}

// joinSummary is a join result in one honest line: durable only when the
// backstop really holds the channel, and why not otherwise. (The same text
// the seat's connector answers its join command with.)
func joinSummary(r mesh.JoinResult) string {
	var b strings.Builder
	b.WriteString("Joined #" + r.Channel)
	switch {
	case r.Durable:
		b.WriteString(" (durable backstop active)")
	case r.Reason != "":
		b.WriteString(" (LIVE only — " + strings.TrimPrefix(r.Reason, "live only: ") + ")")
	default:
		b.WriteString(" (live)")
	}
	if r.Backfilled > 0 {
		fmt.Fprintf(&b, "; %d earlier post(s) in your inbox as history", r.Backfilled)
	}
	return b.String() + "."
}
