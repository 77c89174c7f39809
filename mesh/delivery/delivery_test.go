package delivery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testdelivery"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Tests import broker/ only to stand up a real mesh.

const space = "dlv"

type harness struct {
	t   testing.TB
	b   *broker.Broker
	op  *nats.Conn
	js  jetstream.JetStream
	svc *delivery.Service
	reg *mesh.Registry
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newHarness starts a provisioned authenticated broker and, unless
// noService, the delivery service on its own trusted connection.
func newHarness(t *testing.T, noService bool) *harness { return newHarnessTB(t, noService) }

func newBenchHarness(b *testing.B) *harness { return newHarnessTB(b, false) }

func newHarnessTB(t testing.TB, noService bool) *harness {
	t.Helper()
	return newHarnessWith(t, noService, broker.Options{})
}

// newHarnessWith is newHarness on a broker started with o.
func newHarnessWith(t testing.TB, noService bool, o broker.Options) *harness {
	t.Helper()
	b, op := testmesh.StartWith(t, space, o)
	js, _ := jetstream.New(op)
	reg, err := mesh.OpenRegistry(ctxT(t), js, space)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, b: b, op: op, js: js, reg: reg}
	if !noService {
		h.startService()
	}
	return h
}

func (h *harness) startService() { h.startServiceWith(delivery.Options{}) }

// startServiceWith starts the service with opts, its space and log set.
func (h *harness) startServiceWith(opts delivery.Options) {
	h.t.Helper()
	h.svc = testdelivery.StartWith(h.t, h.b, space, opts)
}

type agent struct {
	name      string
	subscribe []string
	allowSub  []string // nil: the subscribe list (wire.SameAsSubscribe)
	allowPub  []string
}

// mint issues and provisions a credential; it returns the creds path.
func (h *harness) mint(a agent) (string, broker.Identity) {
	h.t.Helper()
	id := broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: a.name},
		Subscribe: a.subscribe, AllowSubscribe: a.allowSub, AllowPublish: a.allowPub}
	if id.AllowSubscribe == nil {
		id.AllowSubscribe = wire.SameAsSubscribe(a.subscribe)
	}
	if id.AllowPublish == nil {
		id.AllowPublish = []string{"team", "team.>", "live", "gen"}
	}
	return testmesh.Mint(h.t, h.b, id)
}

func (h *harness) connect(creds string, o mesh.Options) *mesh.Endpoint {
	h.t.Helper()
	o.URL, o.Creds = h.b.URL(), creds
	o.Logf = func(f string, a ...any) { h.t.Logf("endpoint: "+f, a...) }
	e, err := mesh.Connect(ctxT(h.t), o)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = e.Close() })
	return e
}

func (h *harness) setClass(channel, class string) {
	h.t.Helper()
	if _, err := h.reg.Set(ctxT(h.t), channel, mesh.ChannelConfig{DeliveryClass: class}); err != nil {
		h.t.Fatal(err)
	}
}

// collect reads what is waiting for an endpoint, waiting up to d for the
// first item, and acks it all.
func collect(t *testing.T, e *mesh.Endpoint, d time.Duration) []*mesh.Item {
	t.Helper()
	items, err := e.Collect(ctxT(t), d)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if err := it.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	return items
}

// collectAtLeast reads until n items have come or wait has passed: a
// copy the fan-out has not made yet is not a copy lost, so one read that
// returns what has arrived so far is not the answer.
func collectAtLeast(t *testing.T, e *mesh.Endpoint, n int, wait time.Duration) []*mesh.Item {
	t.Helper()
	var got []*mesh.Item
	deadline := time.Now().Add(wait)
	for len(got) < n {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		got = append(got, collect(t, e, left)...)
	}
	return got
}

func texts(items []*mesh.Item) []string {
	var out []string
	for _, it := range items {
		s := it.Msg.Text()
		if it.Historical {
			s = "(h)" + s
		}
		out = append(out, s)
	}
	return out
}

// send posts as a fresh sender endpoint.
func (h *harness) poster(name string) *mesh.Endpoint {
	h.t.Helper()
	path, _ := h.mint(agent{name: name})
	return h.connect(path, mesh.Options{OneShot: true})
}

func post(t *testing.T, e *mesh.Endpoint, channel, text string, opts ...mesh.SendOption) uint64 {
	t.Helper()
	r, err := e.Send(ctxT(t), channel, text, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r.Seq
}

// settled waits until the delivery service has passed every CHAT post
// and transferred every stored copy.
func (h *harness) settled() {
	h.t.Helper()
	testutil.WaitFor(h.t, 10*time.Second, func() error {
		for _, c := range []struct{ stream, name string }{{wire.ChatStream(space), delivery.FanoutConsumer}, {wire.InboxStream(space), delivery.ReaderConsumer}} {
			cons, err := h.js.Consumer(ctxT(h.t), c.stream, c.name)
			if err != nil {
				return err
			}
			info, err := cons.Info(ctxT(h.t))
			if err != nil {
				return err
			}
			if info.NumPending != 0 || info.NumAckPending != 0 {
				return fmt.Errorf("%s: %d pending, %d unacked", c.name, info.NumPending, info.NumAckPending)
			}
		}
		return nil
	})
}

func equal(a, b []string) bool { return strings.Join(a, "|") == strings.Join(b, "|") }

var _ = json.Marshal
