package proto_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// A schema compiled again from the same bytes is the one made the first
// time (a connection's describe costs no compile), and one from other bytes
// is its own; a refused document is refused every time, never kept; and
// past the bound, what is kept starts afresh and every schema still checks
// what it should.
func TestCompileSchemaKeepsWhatItCompiled(t *testing.T) {
	doc := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	a, err := proto.CompileSchema(doc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.CompileSchema(append(json.RawMessage(nil), doc...))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("the same document compiled twice")
	}
	if err := b.Validate(json.RawMessage(`{"n":"x"}`)); err == nil {
		t.Fatal("the kept schema takes a string for an integer")
	}
	other, err := proto.CompileSchema(json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if other == a || other.Digest() == a.Digest() {
		t.Fatal("another document got the first one's schema")
	}
	bad := json.RawMessage(`{"$ref":"https://elsewhere.example/x.json"}`)
	for range 2 {
		if _, err := proto.CompileSchema(bad); !errors.Is(err, proto.ErrContractInvalid) {
			t.Fatalf("a schema leaving its document: %v, want a contract error each time", err)
		}
	}
	for i := range 600 {
		s, err := proto.CompileSchema(json.RawMessage(fmt.Sprintf(`{"type":"integer","maximum":%d}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(json.RawMessage(fmt.Sprint(i + 1))); err == nil {
			t.Fatalf("schema %d takes %d, over its maximum", i, i+1)
		}
		if err := s.Validate(json.RawMessage(fmt.Sprint(i))); err != nil {
			t.Fatalf("schema %d refuses its own maximum: %v", i, err)
		}
	}
	// Large documents (a hostile endpoint may publish many) are kept only
	// within the byte bound; each still compiles to a schema that checks.
	pad := strings.Repeat("x", 200<<10)
	for i := range 40 {
		big := json.RawMessage(fmt.Sprintf(`{"type":"integer","maximum":%d,"description":"%s"}`, i, pad))
		s, err := proto.CompileSchema(big)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(json.RawMessage(fmt.Sprint(i + 1))); err == nil {
			t.Fatalf("large schema %d takes %d, over its maximum", i, i+1)
		}
		if kept := proto.KeptSchemaBytes(); kept > proto.KeptSchemaLimit {
			t.Fatalf("after %d large schemas %d bytes of documents are kept, over the %d bound", i+1, kept, proto.KeptSchemaLimit)
		}
	}
	c, err := proto.CompileSchema(doc)
	if err != nil || c.Digest() != a.Digest() {
		t.Fatalf("the first document again after the bound: %v", err)
	}
}
