package ep_test

import (
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// TestContractStore: artifacts are create-only at epc.<hex>, re-putting is a no-op, and a stored document that does not hash to its subject is refused on read (checklist 19, 20).
func TestContractStore(t *testing.T) {
	h := newHarness(t)
	store, err := ep.NewContractStore(h.op, space)
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{ "type": "object", "b": 1, "a": [1, 2.50] }`)
	d, err := store.Put(ctxT(t), doc)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := proto.Digest(doc)
	if d != want {
		t.Fatalf("digest %s, want %s", d, want)
	}
	if d2, err := store.Put(ctxT(t), doc); err != nil || d2 != d {
		t.Fatalf("re-put: %s %v", d2, err)
	}
	got, err := store.Get(ctxT(t), d)
	if err != nil || string(got) != `{"a":[1,2.5],"b":1,"type":"object"}` {
		t.Fatalf("get: %s %v", got, err)
	}
	// The stream refuses a second message on the subject.
	subj, _ := proto.ContractSubject(space, d)
	if _, err := h.js.Publish(ctxT(t), subj, []byte(`{"evil":true}`), jsExpectFirst()); err == nil {
		t.Fatal("a second create-only write was accepted")
	}
	// A forged artifact written first under someone else's digest is caught on read.
	other, _ := proto.Digest([]byte(`{"type":"string"}`))
	osubj, _ := proto.ContractSubject(space, other)
	if _, err := h.js.Publish(ctxT(t), osubj, []byte(`{"type":"integer"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(ctxT(t), other); !errors.Is(err, ep.ErrContractCorrupt) {
		t.Fatalf("corrupt artifact: %v", err)
	}
	// Putting the real document stores it again after the foreign one (the
	// stream denies deletes), and every reader, a fresh one too, finds it.
	if d, err := store.Put(ctxT(t), []byte(`{"type":"string"}`)); err != nil || d != other {
		t.Fatalf("put over a corrupt incumbent: %s %v", d, err)
	}
	fresh, err := ep.NewContractStore(h.op, space)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := fresh.Get(ctxT(t), other); err != nil || string(got) != `{"type":"string"}` {
		t.Fatalf("get past a corrupt incumbent: %s %v", got, err)
	}
}

// TestContractStoreOutlivesForeignMessages: a subject whose messages were
// all written by someone else (PubAck bodies and garbage, after the real
// artifact or before it) never stops a reader: it finds the artifact that
// hashes to the digest, or stores it again.
func TestContractStoreOutlivesForeignMessages(t *testing.T) {
	h := newHarness(t)
	store, err := ep.NewContractStore(h.op, space)
	if err != nil {
		t.Fatal(err)
	}
	artifact := []byte(`{"type":"boolean"}`)
	d, err := store.Put(ctxT(t), artifact)
	if err != nil {
		t.Fatal(err)
	}
	subj, _ := proto.ContractSubject(space, d)
	for _, foreign := range []string{`{"stream":"CHAT_x","seq":7}`, "not json", `{"type":"integer"}`} {
		if _, err := h.js.Publish(ctxT(t), subj, []byte(foreign)); err != nil {
			t.Fatal(err)
		}
	}
	fresh, _ := ep.NewContractStore(h.op, space)
	if got, err := fresh.Get(ctxT(t), d); err != nil || string(got) != string(artifact) {
		t.Fatalf("get under foreign messages: %s %v", got, err)
	}
	if d2, err := fresh.Put(ctxT(t), artifact); err != nil || d2 != d {
		t.Fatalf("put under foreign messages: %s %v", d2, err)
	}
}

// TestSchemaDigests: the void schema's digests are the spec's constants; schemas are closed (checklist 20).
func TestSchemaDigests(t *testing.T) {
	v, err := proto.CompileSchema(nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Digest() != proto.VoidSchemaDigest || v.ArtifactDigest() != proto.VoidSchemaArtifactDigest {
		t.Fatalf("void digests %s %s", v.Digest(), v.ArtifactDigest())
	}
	if err := v.Validate(nil); err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(json.RawMessage(`{}`)); err == nil {
		t.Fatal("void accepted an object")
	}
	tests := []struct {
		name string
		doc  string
		ok   bool
	}{
		{"local ref", `{"$defs":{"n":{"type":"integer"}},"$ref":"#/$defs/n"}`, true},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, false},
		{"relative ref", `{"$ref":"other.json"}`, false},
		{"not json", `{`, false},
		{"too deep", deep(40), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := proto.CompileSchema(json.RawMessage(tc.doc))
			if (err == nil) != tc.ok {
				t.Fatalf("err %v", err)
			}
			if err != nil && !errors.Is(err, proto.ErrContractInvalid) {
				t.Fatalf("not ErrContractInvalid: %v", err)
			}
		})
	}
}

func deep(n int) string {
	s := `{"type":"object"}`
	for range n {
		s = `{"items":` + s + `}`
	}
	return s
}

// TestContractStorePutsOnceEach: a server's commands share schemas, so its
// start puts many documents more than once; a store sends each document
// to the stream once and answers the rest from what it stored (each send
// is a write the store fsyncs, or a refused one and a read).
func TestContractStorePutsOnceEach(t *testing.T) {
	h := newHarness(t)
	store, err := ep.NewContractStore(h.op, space)
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"type":"object","properties":{}}`)
	d, _ := proto.Digest(doc)
	subj, _ := proto.ContractSubject(space, d)
	var sends atomic.Int32
	sub, err := h.op.Subscribe(subj, func(*nats.Msg) { sends.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := h.op.Flush(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got, err := store.Put(ctxT(t), doc); err != nil || got != d {
			t.Fatalf("put: %s %v", got, err)
		}
	}
	if err := h.op.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := sends.Load(); n != 1 {
		t.Fatalf("three puts of one document sent %d messages to its subject, want 1", n)
	}
	// Another store of this process on the same server sends nothing either.
	other, _ := ep.NewContractStore(h.op, space)
	if got, err := other.Put(ctxT(t), doc); err != nil || got != d {
		t.Fatalf("put from another store: %s %v", got, err)
	}
	if err := h.op.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := sends.Load(); n != 1 {
		t.Fatalf("a second store's put sent %d messages in all, want 1", n)
	}
	// A fresh mesh (another server) gets its own copy written.
	h2 := newHarness(t)
	fresh, _ := ep.NewContractStore(h2.op, space)
	if _, err := fresh.Put(ctxT(t), doc); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Get(ctxT(t), d); err != nil {
		t.Fatalf("the document is not on the fresh mesh: %v", err)
	}
	probe, _ := ep.NewContractStore(h2.op, space)
	if _, err := probe.Get(ctxT(t), d); err != nil {
		t.Fatalf("a new reader does not find the document on the fresh mesh: %v", err)
	}
}
