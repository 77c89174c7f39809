package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Client calls the managers of a space as one caller: the local operator
// for the census and typing, a spawn-capable agent for spawns and the
// seats it spawned (owner mode), a seat's own process for its self calls.
// Every call is bounded by its ctx. Safe for concurrent use; mu guards the
// progress log, made on the first spawn.
type Client struct {
	ep     *ep.Client
	roster Roster // set for an agent's client (AsAgent)

	mu       sync.Mutex
	progress *progressLog
}

// Roster reads the space's roster as the caller sees it.
type Roster func(ctx context.Context) ([]presence.Peer, error)

// Option shapes a Client.
type Option func(*Client)

// AsAgent makes the client an agent's: an agent may not read the
// registry a census freezes or take the census, so Census sends one ps
// request and returns the broker's or the manager's answer, and Locate
// finds a seat on the roster (its presence names its lifecycle and its
// manager) and addresses it in owner mode, as its spawner.
func AsAgent(roster Roster) Option { return func(c *Client) { c.roster = roster } }

// New is a manager client over c; it never closes c's connection.
func New(c *ep.Client, opts ...Option) *Client {
	cl := &Client{ep: c}
	for _, o := range opts {
		o(cl)
	}
	return cl
}

// EP is the control-surface client calls go through.
func (c *Client) EP() *ep.Client { return c.ep }

// Seat addresses one seat on one manager. The operator addresses a seat by
// name (CensusRow.Seat), or by its lifecycle in any mode (Any); an agent
// acts on a seat it spawned in owner mode (Spawned.Owned): Owner and UID
// name the seat's lifecycle, and the manager refuses if the caller did not
// spawn it or the seat has since become another lifecycle.
type Seat struct {
	Name    string
	Manager string // instance id; "" lets the manager rail pick one
	Owner   string // with UID, the seat's lifecycle: owner mode unless Any
	UID     string
	Any     bool // the operator's any mode, on the lifecycle Owner and UID name
}

// targeted reports whether the seat is addressed by its lifecycle.
func (s Seat) targeted() bool { return s.UID != "" }

// options pin the call to the seat's manager and, addressed by its
// lifecycle, name the seat as the body target.
func (s Seat) options() []ep.CallOption {
	var opts []ep.CallOption
	if s.Manager != "" {
		opts = append(opts, ep.On(s.Manager))
	}
	if s.targeted() {
		mode := proto.ModeOwner
		if s.Any {
			mode = proto.ModeAny
		}
		opts = append(opts, ep.WithTarget(mode, proto.BodyTarget{Owner: s.Owner, Actor: s.Name, LifecycleUID: s.UID}))
	}
	return opts
}

// lifecycle addresses a seat named by the operator by its current
// lifecycle (any mode), from the manager's own row of it: typing is
// targeted, never untargeted.
func (c *Client) lifecycle(ctx context.Context, s Seat) (Seat, error) {
	if s.targeted() {
		return s, nil
	}
	var r Row
	res, err := c.call(ctx, wire.ManagerInspect, NameArgs{Name: s.Name}, &r, s.options()...)
	if err != nil {
		return s, err
	}
	p, err := wire.ParsePrincipal(r.ID)
	if err != nil {
		return s, fmt.Errorf("inspect of %s named no principal (%q): %w", s.Name, r.ID, err)
	}
	s.Owner, s.UID, s.Any = p.Owner, r.LifecycleUID, true
	if s.Manager == "" {
		s.Manager = res.Responder.InstanceID // the manager that has it
	}
	return s, nil
}

// typing says a refusal to type the way every caller reads it: a broker
// that would not carry the request and a manager that would not run it
// both mean the caller is not the operator.
func typing(err error) error {
	e := proto.AsError(err)
	if e == nil || e.Code != proto.CodePermissionDenied || strings.Contains(e.Message, OnlyOperatorTypes) {
		return err
	}
	again := *e
	again.Message = OnlyOperatorTypes + " (" + e.Message + ")"
	return &again
}

// call runs one manager command and decodes its answer into out.
func (c *Client) call(ctx context.Context, command string, args, out any, opts ...ep.CallOption) (*ep.Result, error) {
	r, err := c.ep.Call(ctx, wire.ManagerEndpoint, command, args, opts...)
	if err != nil {
		return nil, c.restarted(err)
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		return nil, fmt.Errorf("%s answered with garbage: %w", command, err)
	}
	return r, nil
}

// Screen is the seat's current screen as text.
func (c *Client) Screen(ctx context.Context, s Seat) (ScreenReply, error) {
	var r ScreenReply
	_, err := c.call(ctx, wire.ManagerScreen, ScreenArgs{Name: s.Name}, &r, s.options()...)
	return r, err
}

// ScreenUntil waits, at the manager, for the seat's screen to show text,
// at most wait (at most MaxScreenWait): the reply's Matched says whether
// it did. Nothing polls: the manager looks each time the seat's screen is
// drawn.
func (c *Client) ScreenUntil(ctx context.Context, s Seat, text string, wait time.Duration) (ScreenReply, error) {
	if err := CheckScreenUntil(text, wait); err != nil {
		return ScreenReply{}, err
	}
	var r ScreenReply
	// The call outlives the wait by what the answer takes to come back.
	opts := append(s.options(), ep.Timeout(wait+5*time.Second))
	_, err := c.call(ctx, wire.ManagerScreen, ScreenArgs{Name: s.Name, Until: text, WaitMs: wait.Milliseconds()}, &r, opts...)
	return r, err
}

// Inspect is the seat's row.
func (c *Client) Inspect(ctx context.Context, s Seat) (Row, error) {
	var r Row
	_, err := c.call(ctx, wire.ManagerInspect, NameArgs{Name: s.Name}, &r, s.options()...)
	return r, err
}

// Stop ends the seat's process (gracefully: SIGTERM, SIGKILL after 3 s)
// and returns its row once it is offline.
func (c *Client) Stop(ctx context.Context, s Seat, graceful bool) (Row, error) {
	var r Row
	_, err := c.call(ctx, wire.ManagerDespawn, DespawnArgs{Name: s.Name, Graceful: &graceful}, &r, s.options()...)
	return r, err
}

// Input types text into the seat as a paste, then Enter when enter is
// set; the reply counts the bytes its terminal accepted. Only the operator
// may: a seat named by its name alone is addressed by its current
// lifecycle (any mode); any other caller's refusal says OnlyOperatorTypes.
func (c *Client) Input(ctx context.Context, s Seat, text string, enter bool) (InputReply, error) {
	var r InputReply
	s, err := c.lifecycle(ctx, s)
	if err != nil {
		return r, typing(err)
	}
	_, err = c.call(ctx, wire.ManagerInput, InputArgs{Name: s.Name, Text: text, Enter: &enter}, &r, s.options()...)
	return r, typing(err)
}

// Keys types named keys into a seat raw (tmux names such as Escape, Enter,
// C-c, Up, F1, or single characters), with no paste markers: what answers
// a prompt or leaves an editor. Operator only, addressed as Input is.
func (c *Client) Keys(ctx context.Context, s Seat, keys ...string) (InputReply, error) {
	var r InputReply
	s, err := c.lifecycle(ctx, s)
	if err != nil {
		return r, typing(err)
	}
	_, err = c.call(ctx, wire.ManagerKeys, KeysArgs{Name: s.Name, Keys: keys}, &r, s.options()...)
	return r, typing(err)
}

// Personas lists the personas the manager (on, or any) spawns from; with
// name, only that one (not-found when there is none). Only the operator
// and spawn-capable agents may.
func (c *Client) Personas(ctx context.Context, name, on string) (PersonasReply, error) {
	var r PersonasReply
	var opts []ep.CallOption
	if on != "" {
		opts = append(opts, ep.On(on))
	}
	_, err := c.call(ctx, wire.ManagerPersonas, PersonasArgs{Name: name}, &r, opts...)
	return r, err
}

// Attach asks the seat's manager for an attach session, held by this
// client's caller; the reply is the signed grant, already served, to dial
// with seat/attach.
func (c *Client) Attach(ctx context.Context, s Seat) (json.RawMessage, error) {
	var r AttachReply
	if _, err := c.call(ctx, wire.ManagerAttach, AttachArgs{Name: s.Name}, &r, s.options()...); err != nil {
		return nil, err
	}
	return r.Grant, nil
}

// restarted turns a pinned call's refusal by a restarted manager (its
// epoch moved on; the call did not run and, pinned, is never re-issued)
// into words, and forgets the old description so the next call binds to
// the manager as it is now.
func (c *Client) restarted(err error) error {
	e := proto.AsError(err)
	if e == nil || e.Code != proto.CodeExpired || !e.HasDetail(proto.BindRefusedKind) {
		return err
	}
	c.ep.Forget(wire.ManagerEndpoint)
	again := *e
	again.Message = "the manager restarted since this client last asked it; nothing was done, try again (" + e.Message + ")"
	return &again
}

// Answer answers what the seat waits on (a permission prompt its hook
// holds) with allow or deny; message is told to the model with a deny.
func (c *Client) Answer(ctx context.Context, s Seat, decision, message string) (AnswerReply, error) {
	var r AnswerReply
	_, err := c.call(ctx, wire.ManagerAnswer, AnswerArgs{Name: s.Name, Decision: decision, Message: message}, &r, s.options()...)
	return r, err
}
