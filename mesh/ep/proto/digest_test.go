package proto_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cotal-go/cotal/mesh/ep/proto"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestVoidSchemaDigests(t *testing.T) {
	d, err := proto.Digest([]byte(proto.VoidSchema))
	if err != nil || d != proto.VoidSchemaArtifactDigest || d != sha(`{"type":"null"}`) {
		t.Fatalf("void artifact digest = %s, %v; constant %s", d, err, proto.VoidSchemaArtifactDigest)
	}
	c, err := proto.ClosureDigest(d, nil)
	want := sha(`{"members":[],"root":"` + d + `","v":1}`)
	if err != nil || c != proto.VoidSchemaDigest || c != want {
		t.Fatalf("void closure digest = %s, %v; constant %s, want %s", c, err, proto.VoidSchemaDigest, want)
	}
}

func TestClosureDigest(t *testing.T) {
	a := "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	b := "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	root := "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
	got, err := proto.ClosureDigest(root, []string{b, a[len("sha256:"):], b})
	want := sha(`{"members":["` + a + `","` + b + `"],"root":"` + root + `","v":1}`)
	if err != nil || got != want {
		t.Fatalf("ClosureDigest = %s, %v; want %s (sorted, deduplicated, normalized)", got, err, want)
	}
	if _, err := proto.ClosureDigest(root, []string{"sha256:xyz"}); !errors.Is(err, proto.ErrInvalidDigest) {
		t.Fatalf("bad member: %v", err)
	}
	if _, err := proto.ClosureDigest("SHA256:"+root[7:], nil); !errors.Is(err, proto.ErrInvalidDigest) {
		t.Fatalf("bad root: %v", err)
	}
}

func TestFingerprint(t *testing.T) {
	f := proto.FingerprintInput{
		Endpoint: "manager", Command: "spawn", Class: "ephemeral",
		InputDigest: inDigest, OutputDigest: outDigest,
		Args:   json.RawMessage(`{ "name" : "reviewer", "agent":"claude" }`),
		Caller: proto.FingerprintCaller{ID: ownerA + ".alice", LifecycleUID: uidA},
		ID:     "req-1",
	}
	got, err := proto.Fingerprint(f)
	want := sha(`{"args":{"agent":"claude","name":"reviewer"},"caller":{"id":"` + ownerA + `.alice","lifecycleUid":"` + uidA +
		`"},"class":"ephemeral","command":"spawn","endpoint":"manager","id":"req-1","inputDigest":"` + inDigest +
		`","outputDigest":"` + outDigest + `"}`)
	if err != nil || got != want {
		t.Fatalf("Fingerprint = %s, %v; want %s", got, err, want)
	}

	f.Authz, f.GoalID = proto.ModeOwner, "req-1"
	f.Target = &proto.BodyTarget{Owner: ownerB, Actor: "bob", LifecycleUID: uidB, MappingRevision: 9}
	f.AuthDigest = sha("token")
	got, err = proto.Fingerprint(f)
	want = sha(`{"args":{"agent":"claude","name":"reviewer"},"authDigest":"` + sha("token") + `","authz":"owner","caller":{"id":"` + ownerA +
		`.alice","lifecycleUid":"` + uidA + `"},"class":"ephemeral","command":"spawn","endpoint":"manager","goalId":"req-1","id":"req-1","inputDigest":"` +
		inDigest + `","outputDigest":"` + outDigest + `","target":{"actor":"bob","lifecycleUid":"` + uidB + `","mappingRevision":9,"owner":"` + ownerB + `"}}`)
	if err != nil || got != want {
		t.Fatalf("Fingerprint with optionals = %s, %v; want %s", got, err, want)
	}

	f.Args = json.RawMessage(`{"a":1,"a":2}`)
	if _, err := proto.Fingerprint(f); !errors.Is(err, proto.ErrDuplicateKey) {
		t.Fatalf("duplicate-key args fingerprinted: %v", err)
	}
}

func TestRequestFingerprint(t *testing.T) {
	s, b := validCall()
	b.Auth = json.RawMessage(`"signed.token"`)
	got, err := proto.RequestFingerprint(s, b)
	if err != nil {
		t.Fatal(err)
	}
	want, err := proto.Fingerprint(proto.FingerprintInput{
		Endpoint: "ai.cotal.manager", Command: "despawn", Class: "ephemeral", Authz: proto.ModeOwner, Target: b.Target,
		InputDigest: inDigest, OutputDigest: outDigest, Args: b.Args, AuthDigest: sha("signed.token"),
		Caller: proto.FingerprintCaller{ID: ownerA + ".alice", LifecycleUID: uidA}, ID: "req-1",
	})
	if err != nil || got != want {
		t.Fatalf("RequestFingerprint = %s; want %s (%v)", got, want, err)
	}
	b.Args = json.RawMessage(`{"graceful":false}`)
	if other, _ := proto.RequestFingerprint(s, b); other == got {
		t.Fatal("different args, same fingerprint")
	}
	b.Auth = json.RawMessage(`{"not":"a string"}`)
	if _, err := proto.RequestFingerprint(s, b); err == nil {
		t.Fatal("a non-string auth slot was fingerprinted")
	}
}
