package ep_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// subInserts is how many subscriptions the broker has ever inserted.
func subInserts(t *testing.T, h *harness) uint64 {
	t.Helper()
	sz, err := h.b.Server().Subsz(&server.SubszOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sz.NumInserts
}

// TestCallsShareOneReplySubscription: calls, concurrent ones too, and
// several clients of one caller on one connection subscribe to their
// replies once, not once a call (each subscribe and unsubscribe rebuilt
// the broker's subscription table twice a call), and each still gets its
// own reply.
func TestCallsShareOneReplySubscription(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	nc := h.conn("calls")
	var clients []*ep.Client
	for range 3 {
		c, err := ep.NewClient(nc, ep.ClientOptions{Space: space, Caller: testCaller, SharedConn: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Call(ctxT(t), endpoint, "echo", map[string]string{"text": "warm"}); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	before := subInserts(t, h)
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n*len(clients))
	for _, c := range clients {
		for g := range 8 { // 24 in flight: under the per-caller limit of 32
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range n / 8 {
					text := fmt.Sprintf("g%d-%d", g, i)
					r, err := c.Call(ctxT(t), endpoint, "echo", map[string]string{"text": text})
					if err == nil && string(r.Data) != `{"instance":"inst-a","text":"`+text+`"}` {
						t.Errorf("call %s got another's reply: %s", text, r.Data)
					}
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := subInserts(t, h) - before; got >= n {
		t.Fatalf("%d calls made %d subscriptions, want them to share the one of their connection and caller", n*len(clients), got)
	}
}

// TestRepliesReachOnlyTheirCaller: with one reply subscription per
// caller routed by nonce, another agent still cannot read a caller's
// replies nor end its wait. While a call waits on a blocked handler, an
// agent holding a real credential (raw nats.go, the nonce and request id
// read off the wire for it) is refused a subscription to the caller's
// reply rail, exact or wild, and a publish of a forged reply there; a
// request of its own naming the caller's reply rail or no-responders
// sentinel as reply-to is answered on its own rail only (the server
// derives it, the broker hands a 503 to the publisher's own
// subscriptions). The call then gets the real reply, the only one its
// rail ever carried.
func TestRepliesReachOnlyTheirCaller(t *testing.T) {
	h := newHarness(t)
	release := make(chan struct{})
	srv, err := ep.NewServer(h.conn("slow"), ep.ServerOptions{Space: space, Endpoint: "test.slow", InstanceID: "slow-a", Identity: serverID})
	if err != nil {
		t.Fatal(err)
	}
	err = srv.Register(ep.Command{Name: "wait", Capability: "read", Output: json.RawMessage(`{"type":"string"}`),
		Handler: func(ctx context.Context, _ *ep.Call) (any, *proto.Error) {
			select {
			case <-release:
				return "real", nil
			case <-ctx.Done():
				return nil, &proto.Error{Code: proto.CodeDeadlineExceeded, Message: "never released"}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(func() { free(); _ = srv.Close() })

	victim := h.client()
	if _, err := victim.Describe(ctxT(t), "test.slow", ""); err != nil { // the router is subscribed from here on
		t.Fatal(err)
	}
	requests := h.tap("cotal." + space + ".ep.one.test_slow.wait.>")
	victimRail := h.tap(proto.CallerReplyFilter(space, testCaller))
	done := make(chan error, 1)
	var got *ep.Result
	go func() {
		r, err := victim.Call(ctxT(t), "test.slow", "wait", nil)
		got = r
		done <- err
	}()
	waitFor(t, func() error {
		if len(requests.All()) == 0 {
			return errors.New("the call has not been published yet")
		}
		return nil
	})
	req := requests.All()[0]
	rq, err := proto.ParseRequest(req.Subject)
	if err != nil {
		t.Fatal(err)
	}
	body, e := proto.DecodeRequest(req.Data)
	if e != nil {
		t.Fatal(e)
	}
	replySubj, err := rq.ReplySubject("slow-a", srv.Epoch())
	if err != nil {
		t.Fatal(err)
	}
	sentinel := proto.NoRespondersSubject(space, testCaller, rq.Nonce)

	mallory := h.agent("mallory")
	for _, pattern := range []string{replySubj, proto.CallerReplyFilter(space, testCaller), "cotal." + space + ".ep.reply.>"} {
		if _, err := mallory.nc.SubscribeSync(pattern); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() error { _ = mallory.nc.Flush(); return mallory.refused(pattern) })
	}
	forged, _ := json.Marshal(proto.OKReply(body.ID, json.RawMessage(`"forged"`)))
	for _, subj := range []string{replySubj, sentinel} {
		if err := mallory.nc.Publish(subj, forged); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() error { _ = mallory.nc.Flush(); return mallory.refused(subj) })
	}
	malloryRail := h.tap(proto.CallerReplyFilter(space, mallory.caller()))
	describe := func(rail proto.Rail, iid, replyTo string) {
		r := proto.Request{Space: space, Rail: rail, Endpoint: "test.slow", InstanceID: iid, Command: proto.CommandDescribe, Caller: mallory.caller(), Nonce: proto.NewNonce()}
		subj, err := r.Subject()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(proto.EndpointRequest{V: proto.Version, ID: wire.NewID(), Op: proto.Op{Endpoint: "test.slow", Command: proto.CommandDescribe},
			Class: proto.ClassEphemeral, ReplyExpected: true, DeadlineMs: 5000, From: proto.From{ID: mallory.caller().ID(), Name: "mallory"}})
		if err := mallory.nc.PublishMsg(&nats.Msg{Subject: subj, Reply: replyTo, Data: b}); err != nil {
			t.Fatal(err)
		}
		if err := mallory.nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	describe(proto.RailInst, "ghost", sentinel) // nobody serves it: a 503 is all the broker can send
	describe(proto.RailInst, "slow-a", replySubj)
	waitFor(t, func() error {
		if len(malloryRail.All()) == 0 {
			return errors.New("the server has not answered mallory's describe yet")
		}
		return nil
	})
	if n := len(victimRail.All()); n != 0 {
		t.Fatalf("the victim's rail carried %d messages before its reply: %v", n, victimRail.All()[0].Subject)
	}
	select {
	case err := <-done:
		t.Fatalf("the call ended before its handler was released: %v (%+v)", err, got)
	default:
	}

	free()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if string(got.Data) != `"real"` || got.Responder.InstanceID != "slow-a" {
		t.Fatalf("the call got %s from %+v, want the real reply", got.Data, got.Responder)
	}
	waitFor(t, func() error { // the tap is another connection: its copy may come after the call's
		if len(victimRail.All()) == 0 {
			return errors.New("the tap has not seen the reply yet")
		}
		return nil
	})
	if all := victimRail.All(); len(all) != 1 || all[0].Subject != replySubj {
		t.Fatalf("the victim's rail carried %d messages, want only its reply on %s", len(all), replySubj)
	}
}
