package ep_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// The tests import broker/ and config/ only to stand up a real mesh; the package never does.

const (
	space    = "eptest"
	endpoint = "test.echo" // dotted name; wire token test_echo
)

// harness is a real, provisioned, authenticated broker on a temp store and a free port.
type harness struct {
	t  testing.TB
	b  *broker.Broker
	op *nats.Conn
	js jetstream.JetStream
	kv jetstream.KeyValue
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	b, op := testmesh.Start(t, space, false)
	js, _ := jetstream.New(op)
	kv, err := js.KeyValue(ctxT(t), wire.RecordsBucket(space))
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, b: b, op: op, js: js, kv: kv}
}

// conn is a fresh in-process operator connection.
func (h *harness) conn(name string) *nats.Conn {
	h.t.Helper()
	nc, err := h.b.Connect(name)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(nc.Close)
	return nc
}

// instance is one running test endpoint instance on its own connection, so "killing" it is closing that connection.
type instance struct {
	h     *harness
	iid   string
	srv   *ep.Server
	nc    *nats.Conn
	casts atomic.Int64
	logs  *logBook
}

type logBook struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBook) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *logBook) has(sub string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			return nil
		}
	}
	return fmt.Errorf("no log line containing %q in %q", sub, l.lines)
}

var serverID = ep.Identity{Principal: wire.Principal{Owner: "local", Actor: "cotal_mesh"}, UID: wire.NewLifecycleUID()}

// currentUID is the one target lifecycle uid the poke command treats as current.
const currentUID = "aaaaaaaaaaaaaaaaaaaaaaaaaa"

const echoInput = `{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string","maxLength":64}}}`
const echoOutput = `{"type":"object","additionalProperties":false,"required":["text","instance"],"properties":{"text":{"type":"string"},"instance":{"type":"string"}}}`

// commands is the small test endpoint: echo, a command with a lying output, a self-mode and an owner-mode command, a counter for casts, a goal starter and goal-result.
func (in *instance) commands(h *harness, iid string) []ep.Command {
	return []ep.Command{
		{Name: "echo", Capability: "read", Input: json.RawMessage(echoInput), Output: json.RawMessage(echoOutput),
			Handler: func(_ context.Context, c *ep.Call) (any, *proto.Error) {
				var a struct{ Text string }
				if e := c.Decode(&a); e != nil {
					return nil, e
				}
				if a.Text == "fail" {
					return nil, &proto.Error{Code: proto.CodeFailedPrecondition, Message: "asked to fail"}
				}
				return map[string]string{"text": a.Text, "instance": c.InstanceID()}, nil
			}},
		{Name: "mismatch", Capability: "read", // its schema takes a string its handler cannot hold
			Input: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"n":{"type":"string"}}}`),
			Handler: func(_ context.Context, c *ep.Call) (any, *proto.Error) {
				var a struct{ N int }
				if e := c.Decode(&a); e != nil {
					return nil, e
				}
				in.casts.Add(1) // never reached: the args do not decode
				return nil, nil
			}},
		{Name: "liar", Capability: "read", Output: json.RawMessage(echoOutput),
			Handler: func(context.Context, *ep.Call) (any, *proto.Error) { return map[string]int{"nope": 1}, nil }},
		{Name: "whoami", Capability: "read", Modes: []proto.Mode{proto.ModeSelf}, Output: json.RawMessage(`{"type":"string"}`),
			Handler: func(_ context.Context, c *ep.Call) (any, *proto.Error) { return c.Caller().ID(), nil }},
		{Name: "poke", Capability: "lifecycle", Modes: []proto.Mode{proto.ModeOwner}, Output: json.RawMessage(`{"type":"string"}`),
			Target: func(_ context.Context, c *ep.Call) *proto.Error {
				if c.Request.Target.LifecycleUID != currentUID {
					return proto.Refuse(proto.CodeExpired, "target %s/%s is not current", c.Request.Target.Actor, c.Request.Target.LifecycleUID)
				}
				return nil
			},
			Handler: func(context.Context, *ep.Call) (any, *proto.Error) { return "poked", nil }},
		{Name: "count", Capability: "write",
			Handler: func(context.Context, *ep.Call) (any, *proto.Error) { in.casts.Add(1); return nil, nil }},
		{Name: "rereg", Capability: "admin", // re-registers its own instance before replying: registration churn
			Handler: func(ctx context.Context, c *ep.Call) (any, *proto.Error) {
				key, _ := ep.SvcKey(endpoint, iid, "spec")
				e, err := h.kv.Get(ctx, key)
				if err != nil {
					return nil, proto.Failed(proto.CodeInternal, "%v", err)
				}
				if _, err := h.kv.Put(ctx, key, e.Value()); err != nil {
					return nil, proto.Failed(proto.CodeInternal, "%v", err)
				}
				return nil, nil
			}},
		{Name: "forget", Capability: "admin", // deletes another instance's spec before replying: a deregistration after the freeze
			Input: json.RawMessage(`{"type":"object","required":["instance"],"properties":{"instance":{"type":"string"}}}`),
			Handler: func(ctx context.Context, c *ep.Call) (any, *proto.Error) {
				var a struct{ Instance string }
				if e := c.Decode(&a); e != nil {
					return nil, e
				}
				key, _ := ep.SvcKey(endpoint, a.Instance, "spec")
				if err := h.kv.Delete(ctx, key); err != nil {
					return nil, proto.Failed(proto.CodeInternal, "%v", err)
				}
				return nil, nil
			}},
		{Name: "start", Capability: "spawn", Input: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["how"],"properties":{"how":{"enum":["succeed","hang"]}}}`),
			Output: json.RawMessage(`{"type":"object","required":["goalId","fingerprint"]}`),
			Handler: func(ctx context.Context, c *ep.Call) (any, *proto.Error) {
				var a struct{ How string }
				if e := c.Decode(&a); e != nil {
					return nil, e
				}
				g, again, e := c.AcceptGoal(ctx, ep.GoalOptions{Readiness: 300 * time.Millisecond})
				if e != nil {
					return nil, e
				}
				if !again && a.How == "succeed" {
					go func() {
						bg, cancel := context.WithTimeout(context.Background(), 5*time.Second)
						defer cancel()
						_ = g.Progress(bg, ep.GoalRunning, map[string]string{"step": "launched"})
						_ = g.Succeed(bg, map[string]string{"name": "done"})
					}()
				}
				return map[string]any{"goalId": g.ID(), "fingerprint": g.Fingerprint(), "readinessDeadlineMs": g.Binding().ReadinessDeadlineMs}, nil
			}},
		ep.GoalResultCommand(),
	}
}

// start runs a test endpoint instance with the given id.
func (h *harness) start(iid string, mod ...func(*ep.ServerOptions)) *instance {
	h.t.Helper()
	in := &instance{h: h, iid: iid, nc: h.conn("instance " + iid), logs: &logBook{}}
	opts := ep.ServerOptions{Space: space, Endpoint: endpoint, InstanceID: iid, Identity: serverID, Logf: in.logs.logf}
	for _, f := range mod {
		f(&opts)
	}
	srv, err := ep.NewServer(in.nc, opts)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, c := range in.commands(h, iid) {
		if err := srv.Register(c); err != nil {
			h.t.Fatal(err)
		}
	}
	if err := srv.Start(ctxT(h.t)); err != nil {
		h.t.Fatal(err)
	}
	in.srv = srv
	h.t.Cleanup(func() { _ = srv.Close() })
	return in
}

// kill drops the instance's connection without deregistering: a crash.
// It returns once the broker has let go of the instance's subscriptions
// (its own no-responders answer says so), which happens a moment after
// the connection closes.
func (in *instance) kill() {
	in.nc.Close()
	probe := in.h.client()
	waitFor(in.h.t, func() error {
		l, err := probe.Probe(ctxT(in.h.t), endpoint, in.iid)
		if err == nil && l == ep.Gone {
			return nil
		}
		return fmt.Errorf("instance %s not gone yet: %v %v", in.iid, l, err)
	})
}

var testCaller = proto.Caller{Owner: "local", Actor: "tester", UID: wire.NewLifecycleUID()}

// client is an operator-connection client that knows nothing about the endpoint beforehand.
func (h *harness) client() *ep.Client {
	h.t.Helper()
	c, err := ep.NewClient(h.conn("client"), ep.ClientOptions{Space: space, Caller: testCaller})
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// agentConn connects over TCP with a freshly minted agent credential; refusals land in errs.
type agentConn struct {
	nc  *nats.Conn
	id  broker.Identity
	mu  sync.Mutex
	err []string
}

func (h *harness) agent(name string, profile ...wire.Profile) *agentConn {
	h.t.Helper()
	id := broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: name}, AllowPublish: []string{}}
	if len(profile) > 0 {
		id.Profile = profile[0]
	}
	c, err := h.b.Authority().Mint(id)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := broker.ProvisionIdentity(ctxT(h.t), h.op, c.Identity); err != nil {
		h.t.Fatal(err)
	}
	path := filepath.Join(h.t.TempDir(), name+".creds")
	if err := broker.WriteCreds(path, c); err != nil {
		h.t.Fatal(err)
	}
	a := &agentConn{id: c.Identity}
	nc, err := nats.Connect(h.b.URL(), nats.UserCredentials(path), nats.CustomInboxPrefix(c.Identity.InboxPrefix()),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			a.mu.Lock()
			a.err = append(a.err, err.Error())
			a.mu.Unlock()
		}))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(nc.Close)
	a.nc = nc
	return a
}

func (a *agentConn) refused(subject string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range a.err {
		if strings.Contains(strings.ToLower(e), "permissions violation") && strings.Contains(e, `"`+subject+`"`) {
			return nil
		}
	}
	return fmt.Errorf("no refusal of %q yet (errors: %v)", subject, a.err)
}

func (a *agentConn) caller() proto.Caller {
	return proto.Caller{Owner: a.id.Principal.Owner, Actor: a.id.Principal.Actor, UID: a.id.UID}
}

// tap records every message on a pattern through the operator connection.
func (h *harness) tap(pattern string) *testmesh.Tap {
	h.t.Helper()
	return testmesh.NewTap(h.t, h.op, pattern)
}

func waitFor(t testing.TB, fn func() error) { t.Helper(); testutil.WaitFor(t, 10*time.Second, fn) }

// raw sends a hand-built request body as the operator and returns the reply; subject fields left zero are filled for the echo command on the one rail.
func (h *harness) raw(req proto.Request, body map[string]any) (proto.EndpointReply, proto.Reply, error) {
	h.t.Helper()
	if req.Space == "" {
		req.Space = space
	}
	if req.Rail == "" {
		req.Rail = proto.RailOne
	}
	if req.Endpoint == "" {
		req.Endpoint = endpoint
	}
	if req.Command == "" {
		req.Command = "echo"
	}
	if req.Caller == (proto.Caller{}) {
		req.Caller = testCaller
	}
	req.Nonce = proto.NewNonce()
	subj, err := req.Subject()
	if err != nil {
		h.t.Fatal(err)
	}
	b, _ := json.Marshal(body)
	nc := h.conn("raw")
	sub, err := nc.SubscribeSync(proto.CallerReplyFilter(space, req.Caller)[:len(proto.CallerReplyFilter(space, req.Caller))-1] + req.Nonce)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := nc.Publish(subj, b); err != nil {
		h.t.Fatal(err)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		return proto.EndpointReply{}, proto.Reply{}, err
	}
	rs, err := proto.ParseReply(m.Subject)
	if err != nil {
		h.t.Fatalf("reply on %s: %v", m.Subject, err)
	}
	r, err := proto.DecodeReply(m.Data)
	if err != nil {
		h.t.Fatalf("reply body %s: %v", m.Data, err)
	}
	return r, rs, nil
}

// validBody is a well-formed echo call body with the served digests.
func validBody(t testing.TB, d *ep.Described, command string, args any) map[string]any {
	t.Helper()
	cmd, ok := d.Command(command)
	if !ok {
		t.Fatalf("no %s in describe", command)
	}
	return map[string]any{
		"v": 1, "id": "req1", "class": "ephemeral", "replyExpected": true, "deadlineMs": 5000,
		"op":   map[string]any{"endpoint": endpoint, "command": command, "inputDigest": cmd.InputDigest, "outputDigest": cmd.OutputDigest},
		"from": map[string]any{"id": testCaller.ID(), "name": testCaller.Actor},
		"args": args,
	}
}

func errCode(t testing.TB, err error) *proto.Error {
	t.Helper()
	e := proto.AsError(err)
	if e == nil {
		t.Fatalf("want an *proto.Error, got %v", err)
	}
	return e
}

var _ = errors.Is
