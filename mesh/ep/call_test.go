package ep_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// TestInvokeValidAndInvalidArgs: a fresh client calls a command it learned by describe; invalid args are refused before anything is published, not-executed (checklist 59).
func TestInvokeValidAndInvalidArgs(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	h.start("inst-b")
	c := h.client()
	res, err := c.Call(ctxT(t), endpoint, "echo", map[string]string{"text": "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Data), `"text":"hello"`) {
		t.Fatalf("data %s", res.Data)
	}
	requests := h.tap("cotal." + space + ".ep.>")
	_, err = c.Call(ctxT(t), endpoint, "echo", map[string]any{"text": 42})
	e := errCode(t, err)
	if e.Code != proto.CodeBadRequest || e.EffectiveOutcome() != proto.NotExecuted || !strings.Contains(e.Message, "did not run") {
		t.Fatalf("got %+v", e)
	}
	_ = h.op.Flush()
	for _, m := range requests.All() {
		if strings.Contains(m.Subject, ".echo.") {
			t.Fatalf("invalid args were published on %s", m.Subject)
		}
	}
	_, err = c.Call(ctxT(t), endpoint, "nope", nil)
	if e := errCode(t, err); e.Code != proto.CodeNotFound || e.EffectiveOutcome() != proto.NotExecuted || !errors.Is(err, ep.ErrNoCommand) {
		t.Fatalf("unknown command: %v", err)
	}
}

// TestStaleEpochRefused: a restarted instance refuses a call bound to its old epoch as not executed; pinned calls are never re-issued, unpinned ones are re-described and re-issued (checklist 13, 23, 60).
func TestStaleEpochRefused(t *testing.T) {
	h := newHarness(t)
	a := h.start("inst-a")
	c := h.client()
	old, err := c.Describe(ctxT(t), endpoint, "inst-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.srv.Close(); err != nil {
		t.Fatal(err)
	}
	a2 := h.start("inst-a")
	if a2.srv.Epoch() != old.Responder.Epoch+1 {
		t.Fatalf("epoch %d after %d", a2.srv.Epoch(), old.Responder.Epoch)
	}
	// Pinned: the cached describe still names the old epoch, so the bind is stale.
	_, err = c.Call(ctxT(t), endpoint, "echo", map[string]string{"text": "x"}, ep.On("inst-a"))
	e := errCode(t, err)
	if e.Code != proto.CodeExpired || e.EffectiveOutcome() != proto.NotExecuted || !e.HasDetail(proto.BindRefusedKind) {
		t.Fatalf("pinned stale call: %+v", e)
	}
	// Unpinned with the stale bind: refused once, re-described, re-issued.
	res, err := c.Call(ctxT(t), endpoint, "echo", map[string]string{"text": "x"}, ep.WithBind(proto.Bind{InstanceID: "inst-a", Epoch: old.Responder.Epoch}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Attempts != 2 || res.Responder.Epoch != a2.srv.Epoch() {
		t.Fatalf("re-issue: attempts %d responder %+v", res.Attempts, res.Responder)
	}
	// A fresh pinned describe binds to the live epoch.
	if _, err := c.Describe(ctxT(t), endpoint, "inst-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctxT(t), endpoint, "echo", map[string]string{"text": "x"}, ep.On("inst-a")); err != nil {
		t.Fatal(err)
	}
}

// TestNoResponderUnavailable: a call nobody serves is unavailable and provably not executed; a call that times out is unknown (checklist 16).
func TestNoResponderUnavailable(t *testing.T) {
	h := newHarness(t)
	a := h.start("inst-a")
	c := h.client()
	if _, err := c.Describe(ctxT(t), endpoint, "inst-a"); err != nil {
		t.Fatal(err)
	}
	a.kill()
	_, err := c.Call(ctxT(t), endpoint, "echo", map[string]string{"text": "x"}, ep.On("inst-a"))
	if e := errCode(t, err); e.Code != proto.CodeUnavailable || e.EffectiveOutcome() != proto.NotExecuted {
		t.Fatalf("got %+v", e)
	}
	if (&proto.Error{Code: proto.CodeInternal}).EffectiveOutcome() != proto.Unknown {
		t.Fatal("a missing outcome must read as unknown")
	}
}

// TestForgedCallerRefusedByBroker: an agent credential cannot publish a request whose caller tokens name another principal; the broker refuses it and the client says permission-denied. (Agents hold no ep rows yet, so its own caller rail is refused too; see the report for the rows.)
func TestForgedCallerRefusedByBroker(t *testing.T) {
	h := newHarness(t)
	h.start("inst-a")
	ag := h.agent("mallory")
	forged := proto.Caller{Owner: "local", Actor: "alice", UID: ag.caller().UID}
	rq := proto.Request{Space: space, Rail: proto.RailOne, Endpoint: endpoint, Command: "echo", Caller: forged, Nonce: proto.NewNonce()}
	subj, _ := rq.Subject()
	if err := ag.nc.Publish(subj, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	_ = ag.nc.Flush()
	waitFor(t, func() error { return ag.refused(subj) })

	c, err := ep.NewClient(ag.nc, ep.ClientOptions{Space: space, Caller: forged})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.Describe(ctx, endpoint, "inst-a")
	if e := errCode(t, err); e.Code != proto.CodePermissionDenied || e.EffectiveOutcome() != proto.NotExecuted {
		t.Fatalf("got %+v", e)
	}
}

// TestInstanceFile: the instance id persists, 0600, and a malformed file aborts instead of re-minting (checklist 22).
func TestInstanceFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "instance.json")
	id, err := ep.LoadOrCreateInstanceID(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ep.LoadOrCreateInstanceID(path)
	if err != nil || again != id {
		t.Fatalf("second load %q %v, want %q", again, err, id)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
	for _, bad := range []string{"", "{", `{"instanceId":"has space"}`, `{"instanceId":"ok","extra":1}`} {
		p := filepath.Join(dir, "bad.json")
		_ = os.WriteFile(p, []byte(bad), 0o600)
		if _, err := ep.LoadOrCreateInstanceID(p); !errors.Is(err, ep.ErrMalformedInstanceFile) {
			t.Fatalf("%q: got %v", bad, err)
		}
		got, _ := os.ReadFile(p)
		if string(got) != bad {
			t.Fatalf("%q was rewritten", bad)
		}
	}
}
