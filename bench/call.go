package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// echoEndpoint is the endpoint the control-call paths serve.
const echoEndpoint = "benchecho"

const (
	echoInput  = `{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string","maxLength":64}}}`
	echoOutput = `{"type":"object","additionalProperties":false,"required":["text","instance"],"properties":{"text":{"type":"string"},"instance":{"type":"string"}}}`
)

// identity is an agent identity: actor, holding role, subscribed to
// channels (and allowed them).
func identity(actor, role string, channels ...string) broker.Identity {
	return broker.Identity{Principal: wire.Principal{Actor: actor}, Role: role,
		Subscribe: channels, AllowSubscribe: wire.SameAsSubscribe(channels)}
}

// serveEcho runs one instance of the echo endpoint on its own
// in-process connection until the path ends.
func serveEcho(ctx context.Context, e *env, iid string) error {
	nc, err := e.b.Connect("bench echo " + iid)
	if err != nil {
		return err
	}
	e.defer_(nc.Close)
	srv, err := ep.NewServer(nc, ep.ServerOptions{Space: e.space, Endpoint: echoEndpoint, InstanceID: iid,
		Identity: ep.Identity{Principal: wire.Principal{Owner: "local", Actor: "cotal_mesh"}, UID: wire.NewLifecycleUID()}})
	if err != nil {
		return err
	}
	err = srv.Register(ep.Command{Name: "echo", Capability: "read", Input: json.RawMessage(echoInput), Output: json.RawMessage(echoOutput),
		Handler: func(_ context.Context, c *ep.Call) (any, *proto.Error) {
			var a struct{ Text string }
			if e := c.Decode(&a); e != nil {
				return nil, e
			}
			return map[string]string{"text": a.Text, "instance": c.InstanceID()}, nil
		}})
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	if err := srv.Start(sctx); err != nil {
		return err
	}
	e.defer_(func() { _ = srv.Close() })
	return nil
}

// echoClient is a client of its own in-process connection that has
// described the echo endpoint (on instance iid, "" for any) once, outside
// any measure.
func echoClient(ctx context.Context, e *env, iid string) (*ep.Client, error) {
	nc, err := e.b.Connect("bench caller")
	if err != nil {
		return nil, err
	}
	e.defer_(nc.Close)
	c, err := ep.NewClient(nc, ep.ClientOptions{Space: e.space, Caller: e.c.Caller()})
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	if _, err := c.Describe(dctx, echoEndpoint, iid); err != nil {
		return nil, fmt.Errorf("describing the echo endpoint: %w", err)
	}
	return c, nil
}

var echoArgs = map[string]string{"text": "ping"}

// oneCall times one echo call.
func oneCall(ctx context.Context, c *ep.Client, opts ...ep.CallOption) func(int) (time.Duration, error) {
	opts = append(opts, ep.Timeout(within))
	return func(int) (time.Duration, error) {
		start := time.Now()
		if _, err := c.Call(ctx, echoEndpoint, "echo", echoArgs, opts...); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
}

// callPath is a control call through the whole pipeline (envelope checks,
// schemas both ways, the derived reply) next to a bare request/reply with
// an echo responder, both on in-process connections.
func callPath(ctx context.Context, e *env, budget time.Duration) (Stat, Stat, error) {
	if err := serveEcho(ctx, e, "echo-a"); err != nil {
		return Stat{}, Stat{}, err
	}
	c, err := echoClient(ctx, e, "")
	if err != nil {
		return Stat{}, Stat{}, err
	}
	srv, err := e.b.Connect("raw server")
	if err != nil {
		return Stat{}, Stat{}, err
	}
	e.defer_(srv.Close)
	subj := "rawecho." + e.name("e")
	if _, err := srv.Subscribe(subj, func(m *nats.Msg) { _ = m.Respond(m.Data) }); err != nil {
		return Stat{}, Stat{}, err
	}
	if err := srv.Flush(); err != nil {
		return Stat{}, Stat{}, err
	}
	cli, err := e.b.Connect("raw client")
	if err != nil {
		return Stat{}, Stat{}, err
	}
	e.defer_(cli.Close)
	data := []byte(`{"text":"ping"}`)
	floor := func(int) (time.Duration, error) {
		start := time.Now()
		if _, err := cli.Request(subj, data, within); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	return pair(ctx, budget, 10, 20000, oneCall(ctx, c), floor)
}

// scatterPath is one scatter until each of 16 instances answered (the
// freeze read included), next to one call to one of them.
func scatterPath(ctx context.Context, e *env, budget time.Duration) (Stat, Stat, error) {
	for i := range 16 {
		if err := serveEcho(ctx, e, fmt.Sprintf("echo-%02d", i)); err != nil {
			return Stat{}, Stat{}, err
		}
	}
	c, err := echoClient(ctx, e, "")
	if err != nil {
		return Stat{}, Stat{}, err
	}
	one, err := echoClient(ctx, e, "echo-00")
	if err != nil {
		return Stat{}, Stat{}, err
	}
	scatter := func(int) (time.Duration, error) {
		start := time.Now()
		res, err := c.Scatter(ctx, echoEndpoint, "echo", echoArgs, ep.Timeout(within))
		if err != nil {
			return 0, err
		}
		if !res.Complete || len(res.Replies) != 16 {
			return 0, fmt.Errorf("scatter incomplete: %d replies, %d missing", len(res.Replies), len(res.Missing))
		}
		return time.Since(start), nil
	}
	return pair(ctx, budget, 5, 5000, scatter, oneCall(ctx, one, ep.On("echo-00")))
}
