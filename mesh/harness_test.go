package mesh_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testdelivery"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// The tests import broker/ only to stand up a real mesh; the mesh package
// itself never does.

const space = "conf"

// harness is a real, provisioned broker on a temp store and a free port.
type harness struct {
	t    testing.TB
	b    *broker.Broker
	open bool
	op   *nats.Conn // in-process operator connection: sees and may publish anything
	js   jetstream.JetStream

	opCreds string // an operator creds file for baseline clients, minted on demand
}

func newHarness(t *testing.T, open bool) *harness { return newHarnessTB(t, open) }

func newHarnessTB(t testing.TB, open bool) *harness {
	t.Helper()
	b, op := testmesh.Start(t, space, open)
	js, _ := jetstream.New(op)
	if !open {
		testdelivery.Start(t, b, space)
	}
	return &harness{t: t, b: b, open: open, op: op, js: js}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// agent describes an identity to mint.
type agent struct {
	name      string
	role      string
	subscribe []string
	allowSub  []string // nil: the subscribe list (wire.SameAsSubscribe)
	allowPub  []string
}

// mint issues and provisions a credential and writes it to a temp file.
func (h *harness) mint(a agent) (path string, id broker.Identity) {
	h.t.Helper()
	in := broker.Identity{
		Space: space, Principal: wire.Principal{Owner: "local", Actor: a.name}, Role: a.role,
		Subscribe: a.subscribe, AllowSubscribe: a.allowSub, AllowPublish: a.allowPub,
	}
	if a.allowSub == nil {
		in.AllowSubscribe = wire.SameAsSubscribe(a.subscribe)
	}
	return testmesh.Mint(h.t, h.b, in)
}

// connect connects an endpoint with a credential file (auth) or by name
// (open mode).
func (h *harness) connect(creds string, o mesh.Options) *mesh.Endpoint {
	h.t.Helper()
	o.URL, o.Creds = h.b.URL(), creds
	if creds == "" {
		o.Space = space
	}
	o.Logf = func(format string, args ...any) { h.t.Logf("endpoint: "+format, args...) }
	e, err := mesh.Connect(ctxT(h.t), o)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = e.Close() })
	return e
}

// agentEndpoint mints and connects in one step.
func (h *harness) agentEndpoint(a agent, o mesh.Options) *mesh.Endpoint {
	h.t.Helper()
	if h.open {
		o.Name, o.Role = a.name, a.role
		if o.Subscribe == nil {
			o.Subscribe = a.subscribe
		}
		return h.connect("", o)
	}
	path, _ := h.mint(a)
	return h.connect(path, o)
}

// tap records every message on a pattern through the operator connection.
func (h *harness) tap(pattern string) *testmesh.Tap {
	h.t.Helper()
	return testmesh.NewTap(h.t, h.op, pattern)
}

// next waits for the endpoint's next item: up to 15 s, since under the
// race detector on a loaded box a stored copy given back can take seconds
// to come again.
func next(t *testing.T, e *mesh.Endpoint) *mesh.Item {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	it, err := e.Next(ctx)
	if err != nil {
		t.Fatalf("%s: no item: %v", e.Me(), err)
	}
	return it
}

// none checks that nothing arrives within d (used only after a marker
// message proves the path is live, so the wait is bounded and meaningful).
func none(t *testing.T, e *mesh.Endpoint, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if it, err := e.Next(ctx); err == nil {
		t.Fatalf("%s: unexpected item %s: %q", e.Me(), it.Kind, it.Msg.Text())
	}
}

// raw publishes bytes as the operator on any subject, through JetStream
// so it is stored where a stream covers it (the streams agents publish to
// answer with a stored notice, the others with an ack).
func (h *harness) raw(subject string, body string) {
	h.t.Helper()
	if s, err := wire.ParseSubject(subject); err == nil && s.Kind != "" {
		testmesh.StoreData(h.t, h.op, subject, []byte(body))
		return
	}
	if _, err := h.js.Publish(ctxT(h.t), subject, []byte(body)); err != nil {
		// Subjects no stream covers are plain core publishes.
		if err := h.op.Publish(subject, []byte(body)); err != nil {
			h.t.Fatal(err)
		}
	}
}

// envelope builds a JSON message body by hand, for forged and odd payloads.
func envelope(id, from string, routing string) string {
	return fmt.Sprintf(`{"id":%q,"ts":1,"space":%q,"from":{"id":%q,"name":%q},%s,"parts":[{"kind":"text","text":"t"}]}`,
		id, space, from, strings.SplitN(from, ".", 2)[len(strings.SplitN(from, ".", 2))-1], routing)
}

// consumerSettled waits until a durable has nothing pending, in flight or
// redelivered: every message was acked or terminated once.
func (h *harness) consumerSettled(stream, durable string) error {
	c, err := h.js.Consumer(ctxT(h.t), stream, durable)
	if err != nil {
		return err
	}
	info, err := c.Info(ctxT(h.t))
	if err != nil {
		return err
	}
	if info.NumPending != 0 || info.NumAckPending != 0 {
		return fmt.Errorf("%s: pending %d, ack pending %d", durable, info.NumPending, info.NumAckPending)
	}
	if info.NumRedelivered != 0 {
		return fmt.Errorf("%s: %d redelivered", durable, info.NumRedelivered)
	}
	return nil
}

func brokerIdentity(name string, allowPub []string) broker.Identity {
	return broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: name}, AllowPublish: allowPub}
}

// rawClient is a plain nats.go connection holding a minted credential,
// bypassing every check the endpoint makes, with the broker's permission
// refusals collected.
type rawConn struct {
	nc   *nats.Conn
	mu   sync.Mutex
	errs []string
}

func rawClient(t *testing.T, h *harness, a agent) *rawConn {
	t.Helper()
	path, id := h.mint(a)
	c := &rawConn{}
	nc, err := nats.Connect(h.b.URL(), nats.UserCredentials(path), nats.CustomInboxPrefix(id.InboxPrefix()),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			c.mu.Lock()
			c.errs = append(c.errs, err.Error())
			c.mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c.nc = nc
	return c
}

func (c *rawConn) violation(subject string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.errs {
		if strings.Contains(strings.ToLower(e), "permissions violation") && strings.Contains(e, `"`+subject+`"`) {
			return nil
		}
	}
	return fmt.Errorf("no refusal of %q yet (errors: %v)", subject, c.errs)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func operatorIdentity() broker.Identity {
	return broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: "bench_op"}, Profile: wire.ProfileOperator}
}

func writeCreds(path string, c broker.Creds) error { return broker.WriteCreds(path, c) }
