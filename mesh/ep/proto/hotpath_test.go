package proto_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// The decoders every control call runs four times (args and output, each
// side) are checked here against the readings they replaced: the
// validator's own UnmarshalJSON, and encoding/json in two passes.

var hotSchemas = []string{
	`{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string","maxLength":64}}}`,
	`{"type":"object","properties":{"n":{"type":"integer","maximum":10},"f":{"type":"number","multipleOf":0.5},"l":{"type":"array","items":{"type":"boolean"},"maxItems":3}}}`,
	`{"type":"null"}`,
	`{"anyOf":[{"type":"string","pattern":"^a+$"},{"type":"array","uniqueItems":true}]}`,
	`{"type":"object","required":["how","n"],"properties":{"how":{"enum":["succeed","hang"]},"n":{"type":"integer","minimum":-3,"maximum":10},"s":{"anyOf":[{"type":"string","minLength":2},{"type":"null"}]}},"additionalProperties":{"type":["boolean","number"]}}`,
	`{"type":["array","null"],"items":{"type":"object","additionalProperties":false,"properties":{"text":{"type":"string","maxLength":3},"l":{"type":"array","minItems":1,"maxItems":2}}},"minItems":1}`,
	`{"type":["object","null"],"additionalProperties":{"type":"string","enum":["a","é"]}}`,
	`{"type":"number","minimum":0.5}`,
	`{"type":"object","properties":{"text":{"type":"string","format":"email"},"any":true,"none":false}}`,
	`{"required":["a"],"properties":{"a":{"type":"integer","maximum":9223372036854775807}}}`,
	`true`,
	`{"const":{"a":1}}`,
}

var hotInputs = []string{
	`{"text":"ping"}`, ` {"text":"ping"} `, `{"text":"ping"} x`, `{"text":"ping"}{}`, `{"text":"ping"`, ``, `   `, `null`,
	`{"text":"a","text":"b"}`, `{"text":"` + strings.Repeat("x", 65) + `"}`, `{"TEXT":"ping"}`, `{"text":"\ud800"}`, "{\"text\":\"\xff\"}",
	`{"n":10}`, `{"n":11}`, `{"n":1e1}`, `{"n":10.0}`, `{"n":100000000000000000000000000001}`, `{"f":1.5}`, `{"f":1.25}`, `{"l":[true,false]}`,
	`{"l":[1]}`, `[1,1]`, `[1,"1"]`, `"aaa"`, `"ab"`, `01`, `-0`, `1 2`, `nul`, `[1,]`, `{"a":1,}`, "\t\n1\r\n",
	`{"how":"hang","n":10}`, `{"how":"hang","n":11}`, `{"how":"hang","n":-3}`, `{"how":"hang","n":-4}`, `{"how":"stop","n":1}`, `{"how":"hang"}`,
	`{"how":"hang","n":1,"s":null}`, `{"how":"hang","n":1,"s":"x"}`, `{"how":"hang","n":1,"s":"xy"}`, `{"how":"hang","n":1,"x":true,"y":2.5}`, `{"how":"hang","n":1,"x":"str"}`,
	`{"how":"h\u0061ng","n":1}`, `{"h\u006fw":"hang","n":1}`, `{"how":"hang","n":1.0}`, `{"how":"hang","n":1e0}`, `{"how":"hang","n":-0}`, `{"how":"hang","n":1,"n":20}`,
	`[{"text":"abc"}]`, `[{"text":"abcd"}]`, `[{"text":"é"}]`, `[{"text":"\u00e9"}]`, `[]`, `[{"l":[]}]`, `[{"l":[1,{"a":[2,"]"]}]}]`, `[{"l":[1,2,3]}]`, `[{"other":1}]`,
	`{"a":"a"}`, `{"a":"é"}`, `{"a":"b"}`, `{"a":"\u0061"}`, `{"a":null}`, `0.5`, `0.4`, `1`, `0`, `{"text":"x@y"}`, `{"any":[1,{"b":"}"}]}`, `{"none":1}`,
	`{"a":9223372036854775807}`, `1000E2000000`, `{"n":1e2000000}`, `{"a":-1e-2000000}`, `{"a":9223372036854775808}`, `{"a":-9223372036854775808}`, `{"a":1}`, `{}`, `{"a":{"a":1}}`, `{"A":1}`,
	` [ { "text" : "ab" , "l" : [ true , null ] } ] `, `{"s":"tab\tin"}`, `{"how":"hang","n":1,"x":[1,[2,[3]]]}`,
}

// reference is the validator's verdict on v as it read instances before
// (a panic of its own is a refusal).
func reference(t *testing.T, sch *jsonschema.Schema, v []byte) (ok bool) {
	t.Helper()
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if len(bytes.TrimSpace(v)) == 0 {
		v = []byte("null")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(v))
	if err != nil {
		return false
	}
	return sch.Validate(inst) == nil
}

func compileBoth(t testing.TB, doc string) (*proto.Schema, *jsonschema.Schema) {
	t.Helper()
	s, err := proto.CompileSchema(json.RawMessage(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.Document())) // canonical: numbers as ECMAScript spells them
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("ref.json", parsed); err != nil {
		t.Fatal(err)
	}
	ref, err := c.Compile("ref.json")
	if err != nil {
		t.Fatal(err)
	}
	return s, ref
}

// TestValidateReadsAsBefore: every verdict of Validate is the one the
// validator's own reading gave, trailing data and bad text included.
func TestValidateReadsAsBefore(t *testing.T) {
	for _, doc := range hotSchemas {
		s, ref := compileBoth(t, doc)
		for _, in := range hotInputs {
			got := s.Validate(json.RawMessage(in)) == nil
			if want := reference(t, ref, []byte(in)); got != want {
				t.Errorf("schema %s, instance %q: valid %v, want %v", doc, in, got, want)
			}
		}
	}
}

func FuzzValidate(f *testing.F) {
	for _, in := range hotInputs {
		f.Add([]byte(in))
	}
	var ours []*proto.Schema
	var refs []*jsonschema.Schema
	for _, doc := range hotSchemas {
		s, ref := compileBoth(f, doc)
		ours, refs = append(ours, s), append(refs, ref)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for i, s := range ours {
			got := s.Validate(in) == nil
			if want := reference(t, refs[i], in); got != want {
				t.Fatalf("schema %s, instance %q: valid %v, want %v", hotSchemas[i], in, got, want)
			}
		}
	})
}

// decodeBefore is DecodeRequest as it was: the version read alone, then the whole body.
func decodeBefore(data []byte) (proto.EndpointRequest, string) {
	var probe struct {
		V json.RawMessage `json:"v"`
	}
	if json.Unmarshal(data, &probe) != nil {
		return proto.EndpointRequest{}, proto.CodeBadRequest
	}
	if string(probe.V) != "1" {
		return proto.EndpointRequest{}, proto.CodeUnsupportedVersion
	}
	var r proto.EndpointRequest
	if json.Unmarshal(data, &r) != nil {
		return proto.EndpointRequest{}, proto.CodeBadRequest
	}
	return r, ""
}

var requestBodies = []string{
	`{"v":1,"id":"r1","op":{"endpoint":"test.echo","command":"echo","inputDigest":"sha256:11","outputDigest":"sha256:22"},"class":"ephemeral","replyExpected":true,"bind":{"instanceId":"inst-a","epoch":3},"args":{"text":"ping"},"from":{"id":"local.alice","name":"alice"},"deadlineMs":5000}`,
	`{"v":2,"op":"garbage"}`, `{"id":"x"}`, `{"v":1,"op":"garbage"}`, `[1]`, `{"v":"1"}`, `{"v":1.0}`, `{"v":1,"v":2}`, `{"v":2,"v":1}`,
	`{"v":1,"args":{"a":[1,2,{"b":null}]},"target":{"owner":"local","actor":"bob","lifecycleUid":"u","mappingRevision":7}}`,
	`{"v":1,"deadlineMs":-1,"replyExpected":"yes"}`, `{"v":1} trailing`, `{"v":1,"ID":"upper"}`, `{"v":1,"args":}`, `{"v":1,"from":{"id":"\u00e9"}}`,
}

// TestDecodeRequestReadsAsBefore: the one-pass read answers every body as
// the two passes did, code for code and field for field.
func TestDecodeRequestReadsAsBefore(t *testing.T) {
	for _, in := range requestBodies {
		checkDecodeAsBefore(t, []byte(in))
	}
}

func FuzzDecodeRequest(f *testing.F) {
	for _, in := range requestBodies {
		f.Add([]byte(in))
	}
	f.Fuzz(checkDecodeAsBefore)
}

func checkDecodeAsBefore(t *testing.T, in []byte) {
	want, wantCode := decodeBefore(in)
	got, e := proto.DecodeRequest(in)
	gotCode := ""
	if e != nil {
		gotCode = e.Code
	}
	if gotCode != wantCode {
		t.Fatalf("%q: code %q (%v), want %q", in, gotCode, e, wantCode)
	}
	if e == nil && !reflect.DeepEqual(normalArgs(got), normalArgs(want)) {
		t.Fatalf("%q: read %+v, want %+v", in, got, want)
	}
}

// normalArgs compacts the raw args, the one field whose bytes the two
// readings may keep differently (whitespace inside it).
func normalArgs(r proto.EndpointRequest) proto.EndpointRequest {
	if len(r.Args) > 0 {
		var b bytes.Buffer
		if json.Compact(&b, r.Args) == nil {
			r.Args = b.Bytes()
		}
	}
	if len(r.Auth) > 0 {
		var b bytes.Buffer
		if json.Compact(&b, r.Auth) == nil {
			r.Auth = b.Bytes()
		}
	}
	return r
}

// TestHotDecodersAllocate bounds the allocations of the per-call reads:
// the two-pass request read made 25 and the validator 19 for these; an
// allocation is most of what each costs.
func TestHotDecodersAllocate(t *testing.T) {
	body := []byte(requestBodies[0])
	if n := testing.AllocsPerRun(200, func() { _, _ = proto.DecodeRequest(body) }); n > 4 {
		t.Errorf("DecodeRequest allocates %.0f times a call, want at most 4 (its strings point into the body)", n)
	}
	s, _ := compileBoth(t, hotSchemas[0])
	args := json.RawMessage(`{"text":"ping"}`)
	if n := testing.AllocsPerRun(200, func() { _ = s.Validate(args) }); n > 1 {
		t.Errorf("Validate allocates %.0f times a call, want at most 1 (its quick check reads the value without building it)", n)
	}
}

// TestValidateSurvivesHugeNumbers: a number math/big will not read,
// against a bound, made the validator dereference nil and take the
// process with it (a caller's args are validated on the server); it is a
// refusal now.
func TestValidateSurvivesHugeNumbers(t *testing.T) {
	s, _ := compileBoth(t, `{"type":"object","properties":{"n":{"type":"number","maximum":10}}}`)
	for _, in := range []string{`{"n":1e2000000}`, `{"n":-1E2000000}`} {
		if err := s.Validate(json.RawMessage(in)); err == nil {
			t.Errorf("%s: valid, want a refusal", in)
		}
	}
	if err := s.Validate(json.RawMessage(`{"n":1e2}`)); err == nil {
		t.Error("1e2 is over the maximum of 10")
	}
}
