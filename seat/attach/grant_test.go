package attach_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/attach"
)

const space = "attachspace"

func testHolder(actor string) attach.Holder {
	return attach.Holder{ID: "local." + actor, LifecycleUID: wire.NewLifecycleUID()}
}

func issue(t *testing.T, s *attach.Signer, serving attach.Serving, h attach.Holder, now time.Time) (attach.Grant, []byte) {
	t.Helper()
	g, err := s.Issue(attach.GrantRequest{Space: space, Endpoint: "manager", Holder: h, Serving: serving, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := g.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return g, raw
}

func TestIssueVerify(t *testing.T) {
	s := attach.NewSigner()
	serving := attach.Serving{InstanceID: ep.NewInstanceID(), Epoch: 3}
	h := testHolder("alice")
	now := time.UnixMilli(1_700_000_000_000)
	g, raw := issue(t, s, serving, h, now)

	if len(g.SessionID) != 43 || len(g.Nonce) < 22 {
		t.Errorf("session id %d chars, nonce %d chars; want 43 (32 bytes) and at least 22", len(g.SessionID), len(g.Nonce))
	}
	if g.Window != 64 || g.V != 1 || g.IAT != now.UnixMilli() || g.EXP-g.IAT != (24*time.Hour).Milliseconds() {
		t.Errorf("grant %+v: want v 1, window 64, iat now, exp 24h later", g)
	}
	wantOut := "cotal." + space + ".eps.manager." + g.SessionID + ".3.local.alice." + h.LifecycleUID + ".out"
	if g.Subjects.Out != wantOut || g.Subjects.In != strings.TrimSuffix(wantOut, "out")+"in" {
		t.Errorf("subjects %+v; want out %s", g.Subjects, wantOut)
	}
	if g.Issuer.KeyID != s.KeyID() || g.Sig == "" {
		t.Errorf("issuer %q sig %q", g.Issuer.KeyID, g.Sig)
	}
	if strings.Contains(g.String(), g.SessionID) || strings.Contains(g.String(), g.Sig) {
		t.Errorf("String() shows a secret: %s", g)
	}
	got, err := s.Verify(raw, attach.Expect{Space: space, Endpoint: "manager", Serving: serving, Now: now.Add(time.Hour)})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got != g {
		t.Errorf("Verify returned %+v; want %+v", got, g)
	}

	// The signature covers the canonical form: reordered members and
	// spacing still verify.
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	pretty, _ := json.MarshalIndent(m, "", "   ")
	if bytes.Equal(pretty, raw) {
		t.Fatal("the re-encoding did not change the bytes")
	}
	if _, err := s.Verify(pretty, attach.Expect{Space: space, Endpoint: "manager", Serving: serving, Now: now}); err != nil {
		t.Fatalf("Verify of a re-spaced copy: %v", err)
	}
}

func TestIssueRefusesBadRequests(t *testing.T) {
	s := attach.NewSigner()
	serving := attach.Serving{InstanceID: ep.NewInstanceID(), Epoch: 1}
	for _, tt := range []struct {
		name string
		req  attach.GrantRequest
	}{
		{"window 0 is default, 1025 is not", attach.GrantRequest{Window: 1025}},
		{"negative window", attach.GrantRequest{Window: -1}},
		{"ttl over 24h", attach.GrantRequest{TTL: 24*time.Hour + time.Millisecond}},
		{"holder not a principal", attach.GrantRequest{Holder: attach.Holder{ID: "alice", LifecycleUID: wire.NewLifecycleUID()}}},
		{"holder uid", attach.GrantRequest{Holder: attach.Holder{ID: "local.alice", LifecycleUID: "x"}}},
		{"endpoint", attach.GrantRequest{Endpoint: "Bad_Endpoint"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req
			req.Space = space
			if req.Endpoint == "" {
				req.Endpoint = "manager"
			}
			if req.Holder == (attach.Holder{}) {
				req.Holder = testHolder("alice")
			}
			req.Serving = serving
			if g, err := s.Issue(req); err == nil {
				t.Fatalf("Issue(%+v) = %+v; want a refusal", req, g)
			}
		})
	}
}

// mutate decodes raw, lets fn change it and re-encodes it.
func mutate(t *testing.T, raw []byte, fn func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	fn(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerifyRefusals(t *testing.T) {
	s := attach.NewSigner()
	serving := attach.Serving{InstanceID: ep.NewInstanceID(), Epoch: 7}
	now := time.Now()
	g, raw := issue(t, s, serving, testHolder("alice"), now)
	expect := attach.Expect{Space: space, Endpoint: "manager", Serving: serving, Now: now}
	_, foreignRaw := issue(t, attach.NewSigner(), serving, testHolder("alice"), now)

	tests := []struct {
		name   string
		raw    []byte
		expect func(e *attach.Expect)
		code   string
		text   string
	}{
		{name: "another key", raw: foreignRaw, code: proto.CodePermissionDenied, text: "signature"},
		{name: "holder changed", raw: mutate(t, raw, func(m map[string]any) {
			m["holder"].(map[string]any)["processEpoch"] = 9
		}), code: proto.CodePermissionDenied, text: "signature"},
		{name: "window widened", raw: mutate(t, raw, func(m map[string]any) { m["window"] = 1024 }), code: proto.CodePermissionDenied},
		{name: "exp moved", raw: mutate(t, raw, func(m map[string]any) { m["exp"] = g.EXP - 1000 }), code: proto.CodePermissionDenied},
		{name: "exp past 24h", raw: mutate(t, raw, func(m map[string]any) { m["exp"] = g.EXP + 1000 }), code: proto.CodeBadRequest, text: "not within 24h"},
		{name: "sig garbled", raw: mutate(t, raw, func(m map[string]any) { m["sig"] = "AAAA" }), code: proto.CodePermissionDenied},
		{name: "sig not base64url", raw: mutate(t, raw, func(m map[string]any) { m["sig"] = "a+b/" }), code: proto.CodeBadRequest},
		{name: "other epoch", raw: raw, expect: func(e *attach.Expect) { e.Serving.Epoch = 8 }, code: proto.CodeExpired, text: "manager restarted"},
		{name: "other instance", raw: raw, expect: func(e *attach.Expect) { e.Serving.InstanceID = ep.NewInstanceID() }, code: proto.CodeFailedPrecondition},
		{name: "other space", raw: raw, expect: func(e *attach.Expect) { e.Space = "elsewhere" }, code: proto.CodePermissionDenied},
		{name: "expired", raw: raw, expect: func(e *attach.Expect) { e.Now = now.Add(24 * time.Hour) }, code: proto.CodeExpired, text: "expired"},
		{name: "unknown member", raw: mutate(t, raw, func(m map[string]any) { m["admin"] = true }), code: proto.CodeBadRequest, text: `unknown member "admin"`},
		{name: "unknown nested member", raw: mutate(t, raw, func(m map[string]any) {
			m["holder"].(map[string]any)["role"] = "x"
		}), code: proto.CodeBadRequest, text: `unknown member "role"`},
		{name: "member in another case", raw: mutate(t, raw, func(m map[string]any) {
			m["Window"] = m["window"]
			delete(m, "window")
		}), code: proto.CodeBadRequest},
		{name: "missing member", raw: mutate(t, raw, func(m map[string]any) { delete(m, "nonce") }), code: proto.CodeBadRequest, text: `lacks "nonce"`},
		{name: "subjects substituted", raw: mutate(t, raw, func(m map[string]any) {
			m["subjects"].(map[string]any)["out"] = "cotal." + space + ".chat.>"
		}), code: proto.CodeBadRequest, text: "subjects"},
		{name: "version 2", raw: mutate(t, raw, func(m map[string]any) { m["v"] = 2 }), code: proto.CodeBadRequest},
		{name: "fractional epoch", raw: mutate(t, raw, func(m map[string]any) {
			m["serving"].(map[string]any)["epoch"] = 7.5
		}), code: proto.CodeBadRequest},
		{name: "duplicate member", raw: append([]byte(`{"window":1,`), raw[1:]...), code: proto.CodeBadRequest},
		{name: "over 16 KiB", raw: mutate(t, raw, func(m map[string]any) { m["pad"] = strings.Repeat("x", 16<<10) }), code: proto.CodeBadRequest, text: "over 16384"},
		{name: "not JSON", raw: []byte("grant"), code: proto.CodeBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := expect
			if tt.expect != nil {
				tt.expect(&e)
			}
			_, err := s.Verify(tt.raw, e)
			ee := proto.AsError(err)
			if ee == nil || ee.Code != tt.code || !strings.Contains(ee.Message, tt.text) {
				t.Fatalf("Verify: %v; want %s with %q", err, tt.code, tt.text)
			}
			if ee.EffectiveOutcome() != proto.NotExecuted {
				t.Errorf("outcome %s; want not-executed", ee.EffectiveOutcome())
			}
		})
	}
}

func TestParseGrantChecksWithoutKey(t *testing.T) {
	s := attach.NewSigner()
	g, raw := issue(t, s, attach.Serving{InstanceID: ep.NewInstanceID(), Epoch: 2}, testHolder("bob"), time.Now())
	got, err := attach.ParseGrant(raw)
	if err != nil || got != g {
		t.Fatalf("ParseGrant = %+v, %v; want %+v", got, err, g)
	}
	short := mutate(t, raw, func(m map[string]any) { m["sessionId"] = "short" })
	if _, err := attach.ParseGrant(short); err == nil {
		t.Fatal("ParseGrant accepted a guessable session id")
	}
}
