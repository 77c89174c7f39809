package ep_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/ep"
)

const (
	inDigest  = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	outDigest = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

func validCall() (ep.Request, ep.EndpointRequest) {
	subject := ep.Request{Space: "main", Rail: ep.RailOne, Endpoint: "ai_cotal_manager", Command: "despawn",
		Mode: ep.ModeOwner, Target: ep.Target{Owner: ownerB}, Caller: alice, Nonce: nonce}
	body := ep.EndpointRequest{
		V: 1, ID: "req-1", Class: ep.ClassEphemeral, ReplyExpected: true, DeadlineMs: 15000,
		Op:     ep.Op{Endpoint: "ai.cotal.manager", Command: "despawn", InputDigest: inDigest, OutputDigest: outDigest},
		Target: &ep.BodyTarget{Owner: ownerB, Actor: "bob", LifecycleUID: uidB},
		Args:   json.RawMessage(`{"graceful":true}`),
		From:   ep.From{ID: ownerA + ".alice", Name: "alice"},
	}
	return subject, body
}

// TestCheckRequest walks the envelope checks in pipeline order; each case breaks one thing and expects its code.
func TestCheckRequest(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*ep.Request, *ep.EndpointRequest)
		code   string // "" = accepted
	}{
		{"valid", func(*ep.Request, *ep.EndpointRequest) {}, ""},
		{"v2", func(_ *ep.Request, b *ep.EndpointRequest) { b.V = 2 }, ep.CodeUnsupportedVersion},
		{"version before everything", func(_ *ep.Request, b *ep.EndpointRequest) { b.V, b.Op.Command, b.From.ID = 0, "x", "x" }, ep.CodeUnsupportedVersion},
		{"bad id", func(_ *ep.Request, b *ep.EndpointRequest) { b.ID = "a.b" }, ep.CodeBadRequest},
		{"call without deadline", func(_ *ep.Request, b *ep.EndpointRequest) { b.DeadlineMs = 0 }, ep.CodeBadRequest},
		{"cast without deadline", func(_ *ep.Request, b *ep.EndpointRequest) { b.DeadlineMs, b.ReplyExpected = 0, false }, ""},
		{"scatter cast without deadline", func(s *ep.Request, b *ep.EndpointRequest) {
			s.Rail, b.DeadlineMs, b.ReplyExpected = ep.RailAll, 0, false
		}, ep.CodeBadRequest},
		{"endpoint mismatch", func(_ *ep.Request, b *ep.EndpointRequest) { b.Op.Endpoint = "manager" }, ep.CodeOpMismatch},
		{"endpoint as token", func(_ *ep.Request, b *ep.EndpointRequest) { b.Op.Endpoint = "ai_cotal_manager" }, ep.CodeOpMismatch},
		{"command mismatch", func(_ *ep.Request, b *ep.EndpointRequest) { b.Op.Command = "spawn" }, ep.CodeOpMismatch},
		{"op before class", func(_ *ep.Request, b *ep.EndpointRequest) { b.Op.Command, b.Class = "spawn", "journal" }, ep.CodeOpMismatch},
		{"class mismatch", func(_ *ep.Request, b *ep.EndpointRequest) { b.Class = ep.ClassJournal }, ep.CodeClassMismatch},
		{"class before digests", func(_ *ep.Request, b *ep.EndpointRequest) { b.Class, b.Op.InputDigest = "record", "" }, ep.CodeClassMismatch},
		{"missing input digest", func(_ *ep.Request, b *ep.EndpointRequest) { b.Op.InputDigest = "" }, ep.CodeContractMismatch},
		{"stale output digest", func(_ *ep.Request, b *ep.EndpointRequest) { b.Op.OutputDigest = inDigest }, ep.CodeContractMismatch},
		{"describe without digests", func(s *ep.Request, b *ep.EndpointRequest) {
			s.Command, s.Mode, s.Target, b.Target = "describe", ep.ModeNone, ep.Target{}, nil
			b.Op = ep.Op{Endpoint: "ai.cotal.manager", Command: "describe"}
		}, ""},
		{"bind on describe", func(s *ep.Request, b *ep.EndpointRequest) {
			s.Command, s.Mode, s.Target, b.Target = "describe", ep.ModeNone, ep.Target{}, nil
			b.Op = ep.Op{Endpoint: "ai.cotal.manager", Command: "describe"}
			b.Bind = &ep.Bind{InstanceID: iid, Epoch: 1}
		}, ep.CodeBadRequest},
		{"bind on all", func(s *ep.Request, b *ep.EndpointRequest) { s.Rail, b.Bind = ep.RailAll, &ep.Bind{InstanceID: iid} }, ep.CodeBadRequest},
		{"bind on one", func(_ *ep.Request, b *ep.EndpointRequest) { b.Bind = &ep.Bind{InstanceID: iid, Epoch: 4} }, ""},
		{"bind contradicting inst", func(s *ep.Request, b *ep.EndpointRequest) {
			s.Rail, s.InstanceID, b.Bind = ep.RailInst, iid, &ep.Bind{InstanceID: "other"}
		}, ep.CodeBadRequest},
		{"target on self", func(s *ep.Request, _ *ep.EndpointRequest) { s.Mode, s.Target = ep.ModeSelf, ep.Target{} }, ep.CodeTargetMismatch},
		{"target on untargeted", func(s *ep.Request, _ *ep.EndpointRequest) { s.Mode, s.Target = ep.ModeNone, ep.Target{} }, ep.CodeTargetMismatch},
		{"owner mode without target", func(_ *ep.Request, b *ep.EndpointRequest) { b.Target = nil }, ep.CodeTargetMismatch},
		{"target owner mismatch", func(_ *ep.Request, b *ep.EndpointRequest) { b.Target.Owner = "local" }, ep.CodeTargetMismatch},
		{"handle triple mismatch", func(s *ep.Request, _ *ep.EndpointRequest) {
			s.Mode, s.Target = ep.ModeHandle, ep.Target{Owner: ownerB, Actor: "bob", UID: uidA}
		}, ep.CodeTargetMismatch},
		{"exact triple match", func(s *ep.Request, _ *ep.EndpointRequest) {
			s.Mode, s.Target = ep.ModeExact, ep.Target{Owner: ownerB, Actor: "bob", UID: uidB}
		}, ""},
		{"sender mismatch", func(_ *ep.Request, b *ep.EndpointRequest) { b.From.ID = ownerB + ".alice" }, ep.CodeSenderMismatch},
		{"target before sender", func(_ *ep.Request, b *ep.EndpointRequest) { b.Target, b.From.ID = nil, "x" }, ep.CodeTargetMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, b := validCall()
			tt.modify(&s, &b)
			e := ep.CheckRequest(s, b, ep.ClassEphemeral, inDigest, outDigest)
			if tt.code == "" {
				if e != nil {
					t.Fatalf("refused: %v", e)
				}
				return
			}
			if e == nil || e.Code != tt.code {
				t.Fatalf("CheckRequest = %v; want %s", e, tt.code)
			}
			if e.Outcome != ep.NotExecuted || !e.MayReissue() {
				t.Fatalf("outcome %q; every envelope refusal is not-executed", e.Outcome)
			}
		})
	}
}

func TestCheckRequestNoExpectedDigest(t *testing.T) {
	s, b := validCall()
	if e := ep.CheckRequest(s, b, ep.ClassEphemeral, "", ""); e == nil || e.Code != ep.CodeContractMismatch {
		t.Fatalf("empty expected digests admitted the request: %v", e)
	}
}

func TestEnvelopeJSON(t *testing.T) {
	_, b := validCall()
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"id":"req-1","op":{"endpoint":"ai.cotal.manager","command":"despawn","inputDigest":"` + inDigest +
		`","outputDigest":"` + outDigest + `"},"class":"ephemeral","replyExpected":true,"target":{"owner":"` + ownerB +
		`","actor":"bob","lifecycleUid":"` + uidB + `"},"args":{"graceful":true},"from":{"id":"` + ownerA +
		`.alice","name":"alice"},"deadlineMs":15000}`
	if string(data) != want {
		t.Fatalf("marshal =\n%s\nwant\n%s", data, want)
	}
	got, e := ep.DecodeRequest(data)
	if e != nil || string(got.Args) != `{"graceful":true}` || got.Target.LifecycleUID != uidB {
		t.Fatalf("DecodeRequest = %+v, %v", got, e)
	}
	if _, e := ep.DecodeRequest([]byte(`{"v":2,"op":"garbage"}`)); e == nil || e.Code != ep.CodeUnsupportedVersion {
		t.Fatalf("v2 with a bad shape: %v; want unsupported-version", e)
	}
	if _, e := ep.DecodeRequest([]byte(`{"id":"x"}`)); e == nil || e.Code != ep.CodeUnsupportedVersion {
		t.Fatalf("missing v: %v; want unsupported-version", e)
	}
	if _, e := ep.DecodeRequest([]byte(`{"v":1,"op":"garbage"}`)); e == nil || e.Code != ep.CodeBadRequest {
		t.Fatalf("bad shape: %v; want bad-request", e)
	}
	if _, e := ep.DecodeRequest([]byte(`[1]`)); e == nil || e.Code != ep.CodeBadRequest {
		t.Fatalf("array body: %v; want bad-request", e)
	}
}

func TestReplyJSON(t *testing.T) {
	r := ep.ErrorReply("req-1", ep.BindRefused(ep.CodeExpired, "bound to epoch %d, serving %d", 3, 4))
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"id":"req-1","ok":false,"error":{"code":"expired","message":"bound to epoch 3, serving 4","details":[{"kind":"ai.cotal.ep.bind-refused"}],"outcome":"not-executed"}}`
	if string(data) != want {
		t.Fatalf("marshal = %s\nwant %s", data, want)
	}
	got, err := ep.DecodeReply(data)
	if err != nil || !got.Error.HasDetail(ep.BindRefusedKind) || !got.Error.MayReissue() {
		t.Fatalf("DecodeReply = %+v, %v", got, err)
	}
	ok, err := ep.DecodeReply([]byte(`{"v":1,"id":"r","ok":true,"data":{"a":1}}`))
	if err != nil || !ok.OK || string(ok.Data) != `{"a":1}` {
		t.Fatalf("ok reply = %+v, %v", ok, err)
	}
	for _, bad := range []string{
		`{"v":2,"id":"r","ok":true}`,
		`{"v":1,"id":"r","ok":false}`,
		`{"v":1,"id":"r","ok":true,"error":{"code":"internal","message":""}}`,
		`{"v":1,"id":"r","ok":false,"error":{"code":"oops","message":""}}`,
		`{"v":1,"id":"r","ok":false,"error":{"code":"internal","message":"","outcome":"maybe"}}`,
	} {
		if r, err := ep.DecodeReply([]byte(bad)); err == nil {
			t.Errorf("DecodeReply(%s) = %+v; want an error", bad, r)
		}
	}
}

func TestErrorOutcomes(t *testing.T) {
	missing := &ep.Error{Code: ep.CodeInternal, Message: "x"}
	if missing.EffectiveOutcome() != ep.Unknown || missing.MayReissue() {
		t.Fatal("a missing outcome must read as unknown")
	}
	if f := ep.Failed(ep.CodeInternal, "boom"); f.Outcome != ep.Executed || f.MayReissue() {
		t.Fatalf("Failed = %+v", f)
	}
	var nilErr *ep.Error
	if nilErr.EffectiveOutcome() != ep.Unknown || nilErr.HasDetail(ep.BindRefusedKind) {
		t.Fatal("nil *Error must read as unknown")
	}
	var err error = ep.Refuse(ep.CodeNotFound, "no seat %q", "bob")
	if err.Error() != `not-found: no seat "bob"` {
		t.Fatalf("Error() = %q", err.Error())
	}
	wrapped := errors.Join(errors.New("calling manager"), err)
	if !errors.Is(wrapped, &ep.Error{Code: ep.CodeNotFound}) || errors.Is(wrapped, &ep.Error{Code: ep.CodeConflict}) {
		t.Fatal("errors.Is must match by code")
	}
	if e := ep.AsError(wrapped); e == nil || e.Code != ep.CodeNotFound {
		t.Fatalf("AsError = %v", e)
	}
}

func TestValidCode(t *testing.T) {
	for _, c := range []string{"bad-request", "internal", "resource-exhausted", "com.acme.throttled", "ai.cotal.ep.bind-refused"} {
		if !ep.ValidCode(c) {
			t.Errorf("%q refused", c)
		}
	}
	long := "com.acme." + strings.Repeat("a", 56) // 65 bytes
	for _, c := range []string{"", "oops", "Bad-Request", "acme.throttled", "com..acme", "com.acme.-x", long} {
		if ep.ValidCode(c) {
			t.Errorf("%q accepted", c)
		}
	}
}
