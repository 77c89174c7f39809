package ep_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/cotal-go/cotal/mesh/ep"
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
	want, _ := ep.Digest(doc)
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
	subj, _ := ep.ContractSubject(space, d)
	if _, err := h.js.Publish(ctxT(t), subj, []byte(`{"evil":true}`), jsExpectFirst()); err == nil {
		t.Fatal("a second create-only write was accepted")
	}
	// A forged artifact written first under someone else's digest is caught on read.
	other, _ := ep.Digest([]byte(`{"type":"string"}`))
	osubj, _ := ep.ContractSubject(space, other)
	if _, err := h.js.Publish(ctxT(t), osubj, []byte(`{"type":"integer"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(ctxT(t), other); !errors.Is(err, ep.ErrContractCorrupt) {
		t.Fatalf("corrupt artifact: %v", err)
	}
	if _, err := store.Put(ctxT(t), []byte(`{"type":"string"}`)); !errors.Is(err, ep.ErrContractCorrupt) {
		t.Fatalf("put over a corrupt incumbent: %v", err)
	}
}

// TestSchemaDigests: the void schema's digests are the spec's constants; schemas are closed (checklist 20).
func TestSchemaDigests(t *testing.T) {
	v, err := ep.CompileSchema(nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Digest() != ep.VoidSchemaDigest || v.ArtifactDigest() != ep.VoidSchemaArtifactDigest {
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
			_, err := ep.CompileSchema(json.RawMessage(tc.doc))
			if (err == nil) != tc.ok {
				t.Fatalf("err %v", err)
			}
			if err != nil && !errors.Is(err, ep.ErrContractInvalid) {
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
