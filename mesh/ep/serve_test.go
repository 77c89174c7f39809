package ep_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// TestServePipeline runs the §3 refusals in order against a live instance (checklist 8-14, 16, 17): every refusal before the handler is not-executed.
func TestServePipeline(t *testing.T) {
	h := newHarness(t)
	a := h.start("inst-a")
	d, err := h.client().Describe(ctxT(t), endpoint, "")
	if err != nil {
		t.Fatal(err)
	}
	epoch := a.srv.Epoch()
	echo := func(mut func(map[string]any)) map[string]any {
		b := validBody(t, d, "echo", map[string]any{"text": "hi"})
		if mut != nil {
			mut(b)
		}
		return b
	}
	op := func(b map[string]any) map[string]any { return b["op"].(map[string]any) }
	owner := proto.Request{Command: "poke", Mode: proto.ModeOwner, Target: proto.Target{Owner: "local"}}
	tests := []struct {
		name    string
		req     proto.Request
		body    map[string]any
		code    string
		outcome proto.Outcome
		bind    bool // the refusal carries ai.cotal.ep.bind-refused
	}{
		{name: "ok", body: echo(nil)},
		{name: "unsupported version", body: echo(func(b map[string]any) { b["v"] = 2 }), code: proto.CodeUnsupportedVersion, outcome: proto.NotExecuted},
		{name: "op endpoint mismatch", body: echo(func(b map[string]any) { op(b)["endpoint"] = "other.ep" }), code: proto.CodeOpMismatch, outcome: proto.NotExecuted},
		{name: "op command mismatch", body: echo(func(b map[string]any) { op(b)["command"] = "liar" }), code: proto.CodeOpMismatch, outcome: proto.NotExecuted},
		{name: "class mismatch", body: echo(func(b map[string]any) { b["class"] = "journal" }), code: proto.CodeClassMismatch, outcome: proto.NotExecuted},
		{name: "missing digest", body: echo(func(b map[string]any) { delete(op(b), "inputDigest") }), code: proto.CodeContractMismatch, outcome: proto.NotExecuted},
		{name: "wrong digest", body: echo(func(b map[string]any) { op(b)["outputDigest"] = proto.VoidSchemaDigest }), code: proto.CodeContractMismatch, outcome: proto.NotExecuted},
		{name: "unregistered mode before args", req: proto.Request{Mode: proto.ModeSelf},
			body: echo(func(b map[string]any) { b["args"] = map[string]any{"nope": true} }), code: proto.CodePermissionDenied, outcome: proto.NotExecuted},
		{name: "schema-invalid args", body: echo(func(b map[string]any) { b["args"] = map[string]any{"text": 7} }), code: proto.CodeBadRequest, outcome: proto.NotExecuted},
		{name: "target on a self request", req: proto.Request{Command: "whoami", Mode: proto.ModeSelf},
			body: func() map[string]any {
				b := validBody(t, d, "whoami", nil)
				b["target"] = map[string]any{"owner": "local", "actor": "x", "lifecycleUid": currentUID}
				return b
			}(), code: proto.CodeTargetMismatch, outcome: proto.NotExecuted},
		{name: "stale target", req: owner, body: func() map[string]any {
			b := validBody(t, d, "poke", nil)
			b["target"] = map[string]any{"owner": "local", "actor": "seat", "lifecycleUid": "bbbbbbbbbbbbbbbbbbbbbbbbbb"}
			return b
		}(), code: proto.CodeExpired, outcome: proto.NotExecuted},
		{name: "current target", req: owner, body: func() map[string]any {
			b := validBody(t, d, "poke", nil)
			b["target"] = map[string]any{"owner": "local", "actor": "seat", "lifecycleUid": currentUID}
			return b
		}()},
		{name: "bind to another instance", body: echo(func(b map[string]any) { b["bind"] = map[string]any{"instanceId": "inst-z", "epoch": epoch} }),
			code: proto.CodeFailedPrecondition, outcome: proto.NotExecuted, bind: true},
		{name: "bind to another epoch", body: echo(func(b map[string]any) { b["bind"] = map[string]any{"instanceId": "inst-a", "epoch": epoch + 7} }),
			code: proto.CodeExpired, outcome: proto.NotExecuted, bind: true},
		{name: "bind to the serving incarnation", body: echo(func(b map[string]any) { b["bind"] = map[string]any{"instanceId": "inst-a", "epoch": epoch} })},
		{name: "bind on describe", req: proto.Request{Command: proto.CommandDescribe}, body: func() map[string]any {
			b := echo(func(b map[string]any) {
				b["bind"] = map[string]any{"instanceId": "inst-a", "epoch": epoch}
				delete(b, "args")
			})
			op(b)["command"] = proto.CommandDescribe
			return b
		}(), code: proto.CodeBadRequest, outcome: proto.NotExecuted},
		{name: "bind on the all rail", req: proto.Request{Rail: proto.RailAll},
			body: echo(func(b map[string]any) { b["bind"] = map[string]any{"instanceId": "inst-a", "epoch": epoch} }), code: proto.CodeBadRequest, outcome: proto.NotExecuted},
		{name: "handler failure is executed", body: echo(func(b map[string]any) { b["args"] = map[string]any{"text": "fail"} }),
			code: proto.CodeFailedPrecondition, outcome: proto.Executed},
		{name: "args the handler cannot decode", req: proto.Request{Command: "mismatch"},
			body: validBody(t, d, "mismatch", map[string]any{"n": "seven"}), code: proto.CodeBadRequest, outcome: proto.NotExecuted},
		{name: "output outside its schema is internal", req: proto.Request{Command: "liar"}, body: validBody(t, d, "liar", nil), code: proto.CodeInternal, outcome: proto.Executed},
		{name: "sender mismatch", body: echo(func(b map[string]any) { b["from"] = map[string]any{"id": "local.mallory", "name": "mallory"} }),
			code: proto.CodeSenderMismatch, outcome: proto.NotExecuted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _, err := h.raw(tc.req, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if tc.code == "" {
				if !r.OK {
					t.Fatalf("refused: %v", r.Error)
				}
				return
			}
			if r.OK || r.Error.Code != tc.code {
				t.Fatalf("want %s, got ok=%v %+v", tc.code, r.OK, r.Error)
			}
			if r.Error.Outcome != tc.outcome {
				t.Fatalf("outcome %q, want %q", r.Error.Outcome, tc.outcome)
			}
			if r.Error.HasDetail(proto.BindRefusedKind) != tc.bind {
				t.Fatalf("bind-refused detail = %v, want %v (%+v)", !tc.bind, tc.bind, r.Error)
			}
		})
	}
}

// TestRepliesDerived: replies go only to the reply subject derived from the request, whatever transport reply-to was set, and the caller learns the responder from that subject (checklist 5-7).
func TestRepliesDerived(t *testing.T) {
	h := newHarness(t)
	a := h.start("inst-a")
	c := h.client()
	replies := h.tap("cotal." + space + ".ep.reply.>")
	requests := h.tap("cotal." + space + ".ep.one.>")
	res, err := c.Call(ctxT(t), endpoint, "echo", map[string]string{"text": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Responder != (ep.Responder{InstanceID: "inst-a", Epoch: a.srv.Epoch()}) {
		t.Fatalf("responder %+v", res.Responder)
	}
	var reqSubj string
	waitFor(t, func() error {
		for _, m := range requests.All() {
			if strings.Contains(m.Subject, ".echo.") {
				reqSubj = m.Subject
				return nil
			}
		}
		return errNot("echo request tapped")
	})
	rq, err := proto.ParseRequest(reqSubj)
	if err != nil {
		t.Fatal(err)
	}
	if len(rq.Nonce) < 22 {
		t.Fatalf("nonce %q shorter than 22", rq.Nonce)
	}
	want, _ := rq.ReplySubject("inst-a", a.srv.Epoch())
	waitFor(t, func() error {
		for _, m := range replies.All() {
			if m.Subject == want {
				return nil
			}
		}
		return errNot("reply on " + want)
	})

	// A transport reply-to is ignored: the reply still goes to the derived subject only.
	nc := h.conn("forger")
	inbox, _ := nc.SubscribeSync("forged.inbox")
	d, _ := c.Describe(ctxT(t), endpoint, "")
	body, _ := json.Marshal(validBody(t, d, "echo", map[string]any{"text": "x"}))
	rq.Nonce = proto.NewNonce()
	subj, _ := rq.Subject()
	derived, _ := rq.ReplySubject("inst-a", a.srv.Epoch())
	got, _ := nc.SubscribeSync(derived)
	if err := nc.PublishRequest(subj, "forged.inbox", body); err != nil {
		t.Fatal(err)
	}
	if _, err := got.NextMsg(5e9); err != nil {
		t.Fatalf("no reply on the derived subject: %v", err)
	}
	_ = nc.Flush()
	if m, err := inbox.NextMsg(0); err == nil {
		t.Fatalf("a reply reached the transport reply-to: %s", m.Data)
	}
}

// TestServeSubscriptions: per registered command, one queue subscription on one (queue = endpoint token), and plain all and inst subscriptions; never a cross-command wildcard (checklist 4).
func TestServeSubscriptions(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	sz, err := h.b.Server().Subsz(&server.SubszOptions{Subscriptions: true, Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	root := "cotal." + space + ".ep."
	seen := map[string]string{}
	for _, s := range sz.Subs {
		if !strings.HasPrefix(s.Subject, root) || strings.HasPrefix(s.Subject, root+"reply.") {
			continue
		}
		seen[s.Subject] = s.Queue
	}
	for _, cmd := range []string{"describe", "echo", "mismatch", "liar", "whoami", "poke", "count", "rereg", "forget", "start", "goal-result"} {
		one, all, inst := proto.ServeSubjects(space, endpoint, "inst-a", cmd)
		if q, ok := seen[one]; !ok || q != "test_echo" {
			t.Errorf("%s: one rail %s queue %q (present %v)", cmd, one, q, ok)
		}
		for _, s := range []string{all, inst} {
			if q, ok := seen[s]; !ok || q != "" {
				t.Errorf("%s: %s queue %q (present %v)", cmd, s, q, ok)
			}
		}
		delete(seen, one)
		delete(seen, all)
		delete(seen, inst)
	}
	if len(seen) != 0 {
		t.Fatalf("unexpected serve subscriptions: %v", seen)
	}
}

// TestUnmatchedSubjectsIgnored: a subject of the wrong arity on a served rail gets no answer, and serving goes on (checklist 1).
func TestUnmatchedSubjectsIgnored(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	c := h.client()
	replies := h.tap("cotal." + space + ".ep.reply.>")
	if err := h.op.Publish("cotal."+space+".ep.one.test_echo.echo.local.tester", []byte(`{"v":1,"replyExpected":true}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctxT(t), endpoint, "echo", map[string]string{"text": "after"}); err != nil {
		t.Fatal(err)
	}
	// Only the marker call's describe and echo were answered.
	waitFor(t, func() error {
		if len(replies.All()) < 2 {
			return errNot("both replies tapped")
		}
		return nil
	})
	if n := len(replies.All()); n != 2 {
		t.Fatalf("%d replies, want 2 (describe + echo)", n)
	}
}

// TestCastNeverReplies: a cast runs but is never answered, not even with an error (checklist 15).
func TestCastNeverReplies(t *testing.T) {
	h := newHarness(t)
	a := h.start("inst-a")
	c := h.client()
	if _, err := c.Describe(ctxT(t), endpoint, ""); err != nil {
		t.Fatal(err)
	}
	replies := h.tap("cotal." + space + ".ep.reply.>")
	if err := c.Cast(ctxT(t), endpoint, "count", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() error {
		if a.casts.Load() != 1 {
			return errNot("cast ran")
		}
		return nil
	})
	// A cast the pipeline refuses: bad args, sent raw past the client's own check.
	d, _ := c.Describe(ctxT(t), endpoint, "")
	b := validBody(t, d, "echo", map[string]any{"text": 9})
	b["replyExpected"] = false
	body, _ := json.Marshal(b)
	rq := proto.Request{Space: space, Rail: proto.RailOne, Endpoint: endpoint, Command: "echo", Caller: testCaller, Nonce: proto.NewNonce()}
	subj, _ := rq.Subject()
	if err := h.op.Publish(subj, body); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() error { return a.logs.has("cast echo from local.tester refused") })
	_ = a.nc.Flush()
	_ = h.op.Flush()
	waitFor(t, func() error {
		if len(replies.All()) < 1 {
			return errNot("describe reply tapped")
		}
		return nil
	})
	before := len(replies.All()) // the second describe's reply
	if before != 1 {
		t.Fatalf("%d replies, want only the describe's", before)
	}
}

// TestDescribeEveryRail: a client that knows nothing about the endpoint discovers it on one, inst and all (checklist 18).
func TestDescribeEveryRail(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	h.start("inst-b")
	c := h.client()
	d, err := c.Describe(ctxT(t), endpoint, "")
	if err != nil {
		t.Fatal(err)
	}
	if !d.Answer.Public || d.Answer.Descriptor.Endpoint != endpoint || len(d.Commands) != 11 {
		t.Fatalf("describe: %+v", d.Answer)
	}
	for _, iid := range []string{"inst-a", "inst-b"} {
		d, err := c.Describe(ctxT(t), endpoint, iid)
		if err != nil {
			t.Fatal(err)
		}
		if d.Responder.InstanceID != iid {
			t.Fatalf("pinned describe answered by %s", d.Responder.InstanceID)
		}
	}
	res, err := c.Scatter(ctxT(t), endpoint, proto.CommandDescribe, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Replies) != 2 {
		t.Fatalf("scatter describe: %+v", res)
	}
}

// TestDescribePrivateNeedsView: a non-public describe without a trusted authority view is unavailable (checklist 18).
func TestDescribePrivateNeedsView(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a", func(o *ep.ServerOptions) { o.Private = true })
	_, err := h.client().Describe(ctxT(t), endpoint, "inst-a")
	if e := errCode(t, err); e.Code != proto.CodeUnavailable {
		t.Fatalf("got %v", err)
	}
}

// TestServerAuthoredRequestIsIgnored: a request carrying headers only the
// server writes was reflected through it (a stored message replayed by a
// direct get onto a rail): it is never served and never answered, while
// the same request without them is.
func TestServerAuthoredRequestIsIgnored(t *testing.T) {
	h := newHarness(t)
	a := h.start("inst-a")
	c := h.client()
	d, err := c.Describe(ctxT(t), endpoint, "")
	if err != nil {
		t.Fatal(err)
	}
	replies := h.tap("cotal." + space + ".ep.reply.>")
	send := func(reflected bool) {
		body, _ := json.Marshal(validBody(t, d, "count", nil))
		rq := proto.Request{Space: space, Rail: proto.RailOne, Endpoint: endpoint, Command: "count", Caller: testCaller, Nonce: proto.NewNonce()}
		subj, _ := rq.Subject()
		m := nats.NewMsg(subj)
		m.Data = body
		if reflected {
			m.Header.Set("Nats-Stream", "KV_x")
			m.Header.Set("Nats-Sequence", "1")
		}
		if err := h.op.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	send(true)
	send(false)
	waitFor(t, func() error {
		if len(replies.All()) < 1 {
			return errNot("the plain request's reply")
		}
		return nil
	})
	_ = a.nc.Flush()
	if n, runs := len(replies.All()), a.casts.Load(); n != 1 || runs != 1 {
		t.Fatalf("%d replies and %d runs, want one of each (the reflected request ignored)", n, runs)
	}
}
