package ep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/nats-io/nats.go"
	fastjson "github.com/segmentio/encoding/json"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Result is a successful call's data and who produced it.
type Result struct {
	Data      json.RawMessage
	Responder Responder // from the reply subject
	Attempts  int       // 1 + automatic re-issues
}

// CallOption shapes a call, cast or scatter.
type CallOption func(*callOptions)

type callOptions struct {
	on          string
	timeout     time.Duration
	bind        *proto.Bind
	mode        proto.Mode
	target      proto.Target
	bodyTarget  *proto.BodyTarget
	goalID      string
	id          string
	correlation *proto.Correlation
	probeAfter  time.Duration
}

// On pins the request to one instance on the inst rail, bound to the epoch its describe reported; a pinned call is never re-issued.
func On(instanceID string) CallOption { return func(o *callOptions) { o.on = instanceID } }

// Timeout sets the deadline; without it the context's deadline, else DefaultCallTimeout.
func Timeout(d time.Duration) CallOption { return func(o *callOptions) { o.timeout = d } }

// WithBind binds an unpinned request to the given incarnation instead of the one its describe resolved; a refusal by another one is re-issued after a fresh describe.
func WithBind(b proto.Bind) CallOption { return func(o *callOptions) { o.bind = &b } }

// WithTarget addresses a targeted mode: the subject target (Owner only for owner/any/child/ledger) and the body target.
func WithTarget(mode proto.Mode, body proto.BodyTarget) CallOption {
	return func(o *callOptions) {
		o.mode, o.bodyTarget = mode, &body
		o.target = proto.Target{Owner: body.Owner}
		if mode == proto.ModeHandle || mode == proto.ModeExact {
			o.target = proto.Target{Owner: body.Owner, Actor: body.Actor, UID: body.LifecycleUID}
		}
	}
}

// Self sends in self mode: the caller is the target.
func Self() CallOption { return func(o *callOptions) { o.mode = proto.ModeSelf } }

// WithGoal names the goal the request starts.
func WithGoal(goalID string) CallOption { return func(o *callOptions) { o.goalID = goalID } }

// WithID sets the request id (default a fresh UUID); a goal accepted under it is found again by id and fingerprint.
func WithID(id string) CallOption { return func(o *callOptions) { o.id = id } }

func buildOptions(opts []CallOption) callOptions {
	var o callOptions
	for _, f := range opts {
		f(&o)
	}
	if o.id == "" {
		o.id = wire.NewID()
	}
	return o
}

// encodeArgs turns args into the wire form; nil is absent (void).
func encodeArgs(args any) (json.RawMessage, *proto.Error) {
	switch a := args.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return a, nil
	case []byte:
		return json.RawMessage(a), nil
	}
	b, err := fastjson.Marshal(args)
	if err != nil {
		return nil, proto.Refuse(proto.CodeBadRequest, "args cannot be encoded: %v; the command did not run", err)
	}
	return b, nil
}

// lookup resolves the command's contract and checks args against it before anything is published: a refusal here did not run.
func (c *Client) lookup(ctx context.Context, endpoint, command, on string, fresh bool, args json.RawMessage) (*Described, DescribedCommand, error) {
	d, err := c.described(ctx, endpoint, on, fresh)
	if err != nil {
		return nil, DescribedCommand{}, err
	}
	cmd, ok := d.Command(command)
	if !ok {
		return nil, DescribedCommand{}, fmt.Errorf("%w: %w", proto.Refuse(proto.CodeNotFound, "%s has no command %q visible to %s; the command did not run", endpoint, command, c.opts.Caller.ID()), ErrNoCommand)
	}
	if err := cmd.Input.Validate(args); err != nil {
		return nil, DescribedCommand{}, proto.Refuse(proto.CodeBadRequest, "args do not fit %s's input schema (%v); the command did not run", command, err)
	}
	return d, cmd, nil
}

func (c *Client) request(endpoint string, cmd DescribedCommand, o callOptions, rail proto.Rail) (proto.Request, proto.EndpointRequest) {
	req := proto.Request{Rail: rail, Endpoint: endpoint, Command: cmd.Name, Mode: o.mode, Target: o.target}
	if rail == proto.RailInst {
		req.InstanceID = o.on
	}
	body := proto.EndpointRequest{V: proto.Version, ID: o.id, Op: proto.Op{Endpoint: proto.EndpointName(mustTok(endpoint)), Command: cmd.Name, InputDigest: cmd.InputDigest, OutputDigest: cmd.OutputDigest},
		Class: cmd.Class, GoalID: o.goalID, Target: o.bodyTarget, From: c.opts.From, Correlation: o.correlation}
	return req, body
}

// Call runs one command and waits for its reply. Args are validated against the described schema before publishing. Every call carries the incarnation it resolved against (its bind): pinned, the instance's described epoch; unpinned, the responder of the describe, so an instance of the one rail that is not it refuses before running instead of acting on a call meant for another (control-surface instance addressing). An unpinned call refused not-executed by a bind is re-described and re-issued, at most MaxReissues times; a pinned one never. Failures are *Error values carrying an outcome.
func (c *Client) Call(ctx context.Context, endpoint, command string, args any, opts ...CallOption) (*Result, error) {
	o := buildOptions(opts)
	ctx, cancel := withDeadline(ctx, o.timeout)
	defer cancel()
	raw, e := encodeArgs(args)
	if e != nil {
		return nil, e
	}
	fresh := false
	for attempt := 1; ; attempt++ {
		d, cmd, err := c.lookup(ctx, endpoint, command, o.on, fresh, raw)
		if err != nil {
			return nil, err
		}
		rail := proto.RailOne
		switch {
		case o.on != "":
			rail = proto.RailInst
			o.bind = &proto.Bind{InstanceID: o.on, Epoch: d.Responder.Epoch}
		case fresh || o.bind == nil:
			o.bind = &proto.Bind{InstanceID: d.Responder.InstanceID, Epoch: d.Responder.Epoch}
		}
		req, body := c.request(endpoint, cmd, o, rail)
		body.ReplyExpected, body.Bind, body.Args, body.DeadlineMs = true, o.bind, raw, deadlineMs(ctx)
		resp, reply, e := c.roundTrip(ctx, req, body)
		if e == nil && !reply.OK {
			e = reply.Error
		}
		if e == nil {
			if err := cmd.Output.Validate(reply.Data); err != nil {
				return nil, &proto.Error{Code: proto.CodeInternal, Message: fmt.Sprintf("%s replied with data outside its output schema: %v", command, err), Outcome: proto.Executed}
			}
			return &Result{Data: reply.Data, Responder: resp, Attempts: attempt}, nil
		}
		if o.on != "" || !e.MayReissue() || !e.HasDetail(proto.BindRefusedKind) || attempt > MaxReissues {
			return nil, e
		}
		fresh = true
	}
}

// Cast publishes a command without waiting for any reply (at most once). A broker refusal of the publish is still reported, as permission-denied; a cast on the all rail carries the deadline.
func (c *Client) Cast(ctx context.Context, endpoint, command string, args any, opts ...CallOption) error {
	o := buildOptions(opts)
	ctx, cancel := withDeadline(ctx, o.timeout)
	defer cancel()
	raw, e := encodeArgs(args)
	if e != nil {
		return e
	}
	d, cmd, err := c.lookup(ctx, endpoint, command, o.on, false, raw)
	if err != nil {
		return err
	}
	rail := proto.RailOne
	if o.on != "" {
		rail = proto.RailInst
		o.bind = &proto.Bind{InstanceID: o.on, Epoch: d.Responder.Epoch}
	}
	req, body := c.request(endpoint, cmd, o, rail)
	body.Bind, body.Args = o.bind, raw
	return c.cast(ctx, req, body, "")
}

// cast publishes and flushes; the flush's PONG comes after any -ERR for the publish, so a refusal is known when it returns. replyTo is the transport reply (a probe's sentinel) or empty.
func (c *Client) cast(ctx context.Context, req proto.Request, body proto.EndpointRequest, replyTo string) error {
	p, e := c.prepare(req, body)
	if e != nil {
		return e
	}
	return c.publishFlushed(ctx, p.subject, replyTo, p.body)
}

func (c *Client) publishFlushed(ctx context.Context, subject, replyTo string, data []byte) error {
	refused, stop := c.perms.Watch(subject)
	defer stop()
	if err := c.nc.PublishMsg(&nats.Msg{Subject: subject, Reply: replyTo, Data: data}); err != nil {
		return proto.Refuse(proto.CodeUnavailable, "publishing %s: %v", subject, err)
	}
	if err := c.nc.FlushWithContext(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return &proto.Error{Code: proto.CodeDeadlineExceeded, Message: "the broker did not confirm the publish in time", Outcome: proto.Unknown}
		}
		return &proto.Error{Code: proto.CodeUnavailable, Message: fmt.Sprintf("flushing %s: %v", subject, err), Outcome: proto.Unknown}
	}
	if err := refusedNow(c.nc, subject, refused); err != nil {
		return proto.Refuse(proto.CodePermissionDenied, "the broker refused to publish on %s: %v", subject, err)
	}
	return nil
}
