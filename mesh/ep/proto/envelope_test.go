package proto_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/ep/proto"
)

const (
	inDigest  = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	outDigest = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

func validCall() (proto.Request, proto.EndpointRequest) {
	subject := proto.Request{Space: "main", Rail: proto.RailOne, Endpoint: "ai_cotal_manager", Command: "despawn",
		Mode: proto.ModeOwner, Target: proto.Target{Owner: ownerB}, Caller: alice, Nonce: nonce}
	body := proto.EndpointRequest{
		V: 1, ID: "req-1", Class: proto.ClassEphemeral, ReplyExpected: true, DeadlineMs: 15000,
		Op:     proto.Op{Endpoint: "ai.cotal.manager", Command: "despawn", InputDigest: inDigest, OutputDigest: outDigest},
		Target: &proto.BodyTarget{Owner: ownerB, Actor: "bob", LifecycleUID: uidB},
		Args:   json.RawMessage(`{"graceful":true}`),
		From:   proto.From{ID: ownerA + ".alice", Name: "alice"},
	}
	return subject, body
}

// TestCheckRequest walks the envelope checks in pipeline order; each case breaks one thing and expects its code.
func TestCheckRequest(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*proto.Request, *proto.EndpointRequest)
		code   string // "" = accepted
	}{
		{"valid", func(*proto.Request, *proto.EndpointRequest) {}, ""},
		{"v2", func(_ *proto.Request, b *proto.EndpointRequest) { b.V = 2 }, proto.CodeUnsupportedVersion},
		{"version before everything", func(_ *proto.Request, b *proto.EndpointRequest) { b.V, b.Op.Command, b.From.ID = 0, "x", "x" }, proto.CodeUnsupportedVersion},
		{"bad id", func(_ *proto.Request, b *proto.EndpointRequest) { b.ID = "a.b" }, proto.CodeBadRequest},
		{"call without deadline", func(_ *proto.Request, b *proto.EndpointRequest) { b.DeadlineMs = 0 }, proto.CodeBadRequest},
		{"cast without deadline", func(_ *proto.Request, b *proto.EndpointRequest) { b.DeadlineMs, b.ReplyExpected = 0, false }, ""},
		{"scatter cast without deadline", func(s *proto.Request, b *proto.EndpointRequest) {
			s.Rail, b.DeadlineMs, b.ReplyExpected = proto.RailAll, 0, false
		}, proto.CodeBadRequest},
		{"endpoint mismatch", func(_ *proto.Request, b *proto.EndpointRequest) { b.Op.Endpoint = "manager" }, proto.CodeOpMismatch},
		{"endpoint as token", func(_ *proto.Request, b *proto.EndpointRequest) { b.Op.Endpoint = "ai_cotal_manager" }, proto.CodeOpMismatch},
		{"command mismatch", func(_ *proto.Request, b *proto.EndpointRequest) { b.Op.Command = "spawn" }, proto.CodeOpMismatch},
		{"op before class", func(_ *proto.Request, b *proto.EndpointRequest) { b.Op.Command, b.Class = "spawn", "journal" }, proto.CodeOpMismatch},
		{"class mismatch", func(_ *proto.Request, b *proto.EndpointRequest) { b.Class = proto.ClassJournal }, proto.CodeClassMismatch},
		{"class before digests", func(_ *proto.Request, b *proto.EndpointRequest) { b.Class, b.Op.InputDigest = "record", "" }, proto.CodeClassMismatch},
		{"missing input digest", func(_ *proto.Request, b *proto.EndpointRequest) { b.Op.InputDigest = "" }, proto.CodeContractMismatch},
		{"stale output digest", func(_ *proto.Request, b *proto.EndpointRequest) { b.Op.OutputDigest = inDigest }, proto.CodeContractMismatch},
		{"describe without digests", func(s *proto.Request, b *proto.EndpointRequest) {
			s.Command, s.Mode, s.Target, b.Target = "describe", proto.ModeNone, proto.Target{}, nil
			b.Op = proto.Op{Endpoint: "ai.cotal.manager", Command: "describe"}
		}, ""},
		{"bind on describe", func(s *proto.Request, b *proto.EndpointRequest) {
			s.Command, s.Mode, s.Target, b.Target = "describe", proto.ModeNone, proto.Target{}, nil
			b.Op = proto.Op{Endpoint: "ai.cotal.manager", Command: "describe"}
			b.Bind = &proto.Bind{InstanceID: iid, Epoch: 1}
		}, proto.CodeBadRequest},
		{"bind on all", func(s *proto.Request, b *proto.EndpointRequest) {
			s.Rail, b.Bind = proto.RailAll, &proto.Bind{InstanceID: iid}
		}, proto.CodeBadRequest},
		{"bind on one", func(_ *proto.Request, b *proto.EndpointRequest) { b.Bind = &proto.Bind{InstanceID: iid, Epoch: 4} }, ""},
		{"bind contradicting inst", func(s *proto.Request, b *proto.EndpointRequest) {
			s.Rail, s.InstanceID, b.Bind = proto.RailInst, iid, &proto.Bind{InstanceID: "other"}
		}, proto.CodeBadRequest},
		{"target on self", func(s *proto.Request, _ *proto.EndpointRequest) { s.Mode, s.Target = proto.ModeSelf, proto.Target{} }, proto.CodeTargetMismatch},
		{"target on untargeted", func(s *proto.Request, _ *proto.EndpointRequest) { s.Mode, s.Target = proto.ModeNone, proto.Target{} }, proto.CodeTargetMismatch},
		{"owner mode without target", func(_ *proto.Request, b *proto.EndpointRequest) { b.Target = nil }, proto.CodeTargetMismatch},
		{"target owner mismatch", func(_ *proto.Request, b *proto.EndpointRequest) { b.Target.Owner = "local" }, proto.CodeTargetMismatch},
		{"handle triple mismatch", func(s *proto.Request, _ *proto.EndpointRequest) {
			s.Mode, s.Target = proto.ModeHandle, proto.Target{Owner: ownerB, Actor: "bob", UID: uidA}
		}, proto.CodeTargetMismatch},
		{"exact triple match", func(s *proto.Request, _ *proto.EndpointRequest) {
			s.Mode, s.Target = proto.ModeExact, proto.Target{Owner: ownerB, Actor: "bob", UID: uidB}
		}, ""},
		{"sender mismatch", func(_ *proto.Request, b *proto.EndpointRequest) { b.From.ID = ownerB + ".alice" }, proto.CodeSenderMismatch},
		{"target before sender", func(_ *proto.Request, b *proto.EndpointRequest) { b.Target, b.From.ID = nil, "x" }, proto.CodeTargetMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, b := validCall()
			tt.modify(&s, &b)
			e := proto.CheckRequest(s, b, proto.ClassEphemeral, inDigest, outDigest)
			if tt.code == "" {
				if e != nil {
					t.Fatalf("refused: %v", e)
				}
				return
			}
			if e == nil || e.Code != tt.code {
				t.Fatalf("CheckRequest = %v; want %s", e, tt.code)
			}
			if e.Outcome != proto.NotExecuted || !e.MayReissue() {
				t.Fatalf("outcome %q; every envelope refusal is not-executed", e.Outcome)
			}
		})
	}
}

func TestCheckRequestNoExpectedDigest(t *testing.T) {
	s, b := validCall()
	if e := proto.CheckRequest(s, b, proto.ClassEphemeral, "", ""); e == nil || e.Code != proto.CodeContractMismatch {
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
	got, e := proto.DecodeRequest(data)
	if e != nil || string(got.Args) != `{"graceful":true}` || got.Target.LifecycleUID != uidB {
		t.Fatalf("DecodeRequest = %+v, %v", got, e)
	}
	if _, e := proto.DecodeRequest([]byte(`{"v":2,"op":"garbage"}`)); e == nil || e.Code != proto.CodeUnsupportedVersion {
		t.Fatalf("v2 with a bad shape: %v; want unsupported-version", e)
	}
	if _, e := proto.DecodeRequest([]byte(`{"id":"x"}`)); e == nil || e.Code != proto.CodeUnsupportedVersion {
		t.Fatalf("missing v: %v; want unsupported-version", e)
	}
	if _, e := proto.DecodeRequest([]byte(`{"v":1,"op":"garbage"}`)); e == nil || e.Code != proto.CodeBadRequest {
		t.Fatalf("bad shape: %v; want bad-request", e)
	}
	if _, e := proto.DecodeRequest([]byte(`[1]`)); e == nil || e.Code != proto.CodeBadRequest {
		t.Fatalf("array body: %v; want bad-request", e)
	}
}

func TestReplyJSON(t *testing.T) {
	r := proto.ErrorReply("req-1", proto.BindRefused(proto.CodeExpired, "bound to epoch %d, serving %d", 3, 4))
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"id":"req-1","ok":false,"error":{"code":"expired","message":"bound to epoch 3, serving 4","details":[{"kind":"ai.cotal.ep.bind-refused"}],"outcome":"not-executed"}}`
	if string(data) != want {
		t.Fatalf("marshal = %s\nwant %s", data, want)
	}
	got, err := proto.DecodeReply(data)
	if err != nil || !got.Error.HasDetail(proto.BindRefusedKind) || !got.Error.MayReissue() {
		t.Fatalf("DecodeReply = %+v, %v", got, err)
	}
	ok, err := proto.DecodeReply([]byte(`{"v":1,"id":"r","ok":true,"data":{"a":1}}`))
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
		if r, err := proto.DecodeReply([]byte(bad)); err == nil {
			t.Errorf("DecodeReply(%s) = %+v; want an error", bad, r)
		}
	}
}

func TestErrorOutcomes(t *testing.T) {
	missing := &proto.Error{Code: proto.CodeInternal, Message: "x"}
	if missing.EffectiveOutcome() != proto.Unknown || missing.MayReissue() {
		t.Fatal("a missing outcome must read as unknown")
	}
	if f := proto.Failed(proto.CodeInternal, "boom"); f.Outcome != proto.Executed || f.MayReissue() {
		t.Fatalf("Failed = %+v", f)
	}
	var nilErr *proto.Error
	if nilErr.EffectiveOutcome() != proto.Unknown || nilErr.HasDetail(proto.BindRefusedKind) {
		t.Fatal("nil *Error must read as unknown")
	}
	var err error = proto.Refuse(proto.CodeNotFound, "no seat %q", "bob")
	if err.Error() != `not-found: no seat "bob"` {
		t.Fatalf("Error() = %q", err.Error())
	}
	wrapped := errors.Join(errors.New("calling manager"), err)
	if !errors.Is(wrapped, &proto.Error{Code: proto.CodeNotFound}) || errors.Is(wrapped, &proto.Error{Code: proto.CodeConflict}) {
		t.Fatal("errors.Is must match by code")
	}
	if e := proto.AsError(wrapped); e == nil || e.Code != proto.CodeNotFound {
		t.Fatalf("AsError = %v", e)
	}
}

func TestValidCode(t *testing.T) {
	for _, c := range []string{"bad-request", "internal", "resource-exhausted", "com.acme.throttled", "ai.cotal.ep.bind-refused"} {
		if !proto.ValidCode(c) {
			t.Errorf("%q refused", c)
		}
	}
	long := "com.acme." + strings.Repeat("a", 56) // 65 bytes
	for _, c := range []string{"", "oops", "Bad-Request", "acme.throttled", "com..acme", "com.acme.-x", long} {
		if proto.ValidCode(c) {
			t.Errorf("%q accepted", c)
		}
	}
}
