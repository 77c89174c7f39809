package proto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	fastjson "github.com/segmentio/encoding/json"
)

// Contract document limits of spec §7.
const (
	MaxSchemaBytes = 256 << 10 // one artifact
	MaxSchemaDepth = 32        // nesting of one artifact
)

// ErrContractInvalid is returned when a schema is not a closed JSON Schema 2020-12 document within the §7 limits.
var ErrContractInvalid = errors.New("contract invalid")

// Schema is one compiled, closed JSON Schema 2020-12 document with its content addresses. It is immutable and safe for concurrent use.
type Schema struct {
	doc      []byte // RFC 8785 form, exactly what epc.<hex> stores
	artifact string // Digest of doc
	closure  string // ClosureDigest(artifact, no members): what op.inputDigest carries
	sch      *jsonschema.Schema
	quick    *shape // sure of most valid values in one pass; the rest go to sch
}

// refuseLoads keeps bundles closed: a $ref that leaves the document is a contract error, never a fetch.
type refuseLoads struct{}

func (refuseLoads) Load(url string) (any, error) {
	return nil, fmt.Errorf("%w: $ref %s leaves the document; contracts are closed bundles", ErrContractInvalid, url)
}

// compiled keeps the schemas CompileSchema made, by the bytes they were
// made from: a compile is a function of those bytes alone, and a process
// compiles the same few contracts over and over (every connection
// describes the delivery service, every seat serves the same commands), at
// about two thirds of a connection's time. Documents come from other
// endpoints too, so what is kept is bounded: at most compiledKeep
// documents of compiledBytes in all; past either it starts afresh.
var compiled struct {
	mu    sync.Mutex
	m     map[string]*Schema
	bytes int
}

const (
	compiledKeep  = 512
	compiledBytes = 4 << 20
)

// CompileSchema canonicalizes, bounds and compiles a schema; an empty doc is the void schema.
func CompileSchema(doc json.RawMessage) (*Schema, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = json.RawMessage(VoidSchema)
	}
	compiled.mu.Lock()
	s := compiled.m[string(doc)]
	compiled.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := compileSchema(doc)
	if err != nil {
		return nil, err
	}
	compiled.mu.Lock()
	if compiled.m == nil || len(compiled.m) >= compiledKeep || compiled.bytes+len(doc) > compiledBytes {
		compiled.m, compiled.bytes = make(map[string]*Schema), 0
	}
	compiled.m[string(doc)] = s
	compiled.bytes += len(doc)
	compiled.mu.Unlock()
	return s, nil
}

func compileSchema(doc json.RawMessage) (*Schema, error) {
	if len(doc) > MaxSchemaBytes {
		return nil, fmt.Errorf("%w: schema is %d bytes, over %d", ErrContractInvalid, len(doc), MaxSchemaBytes)
	}
	c, err := Canonical(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrContractInvalid, err)
	}
	if d := jsonDepth(c); d > MaxSchemaDepth {
		return nil, fmt.Errorf("%w: schema nests %d deep, over %d", ErrContractInvalid, d, MaxSchemaDepth)
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(c))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrContractInvalid, err)
	}
	artifact := RawDigest(c)
	url := "https://epc.cotal.invalid/" + artifact[len(DigestPrefix):] + ".json"
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.UseLoader(refuseLoads{})
	if err := comp.AddResource(url, parsed); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrContractInvalid, err)
	}
	sch, err := comp.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrContractInvalid, err)
	}
	closure, err := ClosureDigest(artifact, nil)
	if err != nil {
		return nil, err
	}
	return &Schema{doc: c, artifact: artifact, closure: closure, sch: sch, quick: shapeOf(sch, map[*jsonschema.Schema]*shape{})}, nil
}

// Digest is the closure digest, the value op.inputDigest and op.outputDigest carry.
func (s *Schema) Digest() string { return s.closure }

// ArtifactDigest addresses the document itself at epc.<hex>.
func (s *Schema) ArtifactDigest() string { return s.artifact }

// Document is the schema's RFC 8785 form.
func (s *Schema) Document() json.RawMessage { return json.RawMessage(s.doc) }

// Validate checks one JSON value; an absent value is null.
func (s *Schema) Validate(v json.RawMessage) error {
	if len(bytes.TrimSpace(v)) == 0 {
		v = json.RawMessage("null")
	}
	if s.quick.accepts(v) {
		return nil
	}
	inst, err := instance(v)
	if err != nil {
		return fmt.Errorf("not one JSON value: %w", err)
	}
	if err := s.check(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(flatValidation(ve))
		}
		return err
	}
	return nil
}

// check runs the validator on inst. The validator dereferences a nil
// number when a bound meets a number math/big will not read (1e2000000
// against a maximum), which would take the process down with it; such a
// value is refused instead.
func (s *Schema) check(inst any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("a value the validator cannot compare (%v)", r)
		}
	}()
	return s.sch.Validate(inst)
}

// instance reads one JSON value into the form the validator walks (maps,
// slices, strings, bools, nil and json.Number), refusing anything after
// it. It is the validator's own reading, in one pass without a Decoder:
// every call validates twice on each side.
func instance(v json.RawMessage) (any, error) {
	var inst any
	rest, err := fastjson.Parse(v, &inst, fastjson.UseNumber)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimLeft(rest, " \t\r\n")) != 0 {
		return nil, errors.New("invalid character after top-level value")
	}
	return inst, nil
}

// flatValidation renders the deepest causes on one line, the part a person can act on.
func flatValidation(ve *jsonschema.ValidationError) string {
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e.Error())
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(leaves) > 4 {
		leaves = append(leaves[:4], fmt.Sprintf("(%d more)", len(leaves)-4))
	}
	out := ""
	for i, l := range leaves {
		if i > 0 {
			out += "; "
		}
		out += l
	}
	return out
}

// jsonDepth is the deepest array/object nesting of a canonical JSON text.
func jsonDepth(c []byte) int {
	depth, max, inStr := 0, 0, false
	for i := 0; i < len(c); i++ {
		switch b := c[i]; {
		case inStr && b == '\\':
			i++
		case b == '"':
			inStr = !inStr
		case inStr:
		case b == '{' || b == '[':
			depth++
			if depth > max {
				max = depth
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return max
}
