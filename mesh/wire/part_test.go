package wire_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

func int64p(n int64) *int64 { return &n }

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestPartMarshal(t *testing.T) {
	tests := []struct {
		name string
		part wire.Part
		want string
	}{
		{"text", wire.Part{Kind: "text", Text: "hi"}, `{"kind":"text","text":"hi"}`},
		{"empty text", wire.Part{Kind: "text"}, `{"kind":"text","text":""}`},
		{"data", wire.Part{Kind: "data", Data: json.RawMessage(`{"a":[1,2]}`)}, `{"kind":"data","data":{"a":[1,2]}}`},
		{"data null", wire.Part{Kind: "data", Data: json.RawMessage(`null`)}, `{"kind":"data","data":null}`},
		{"artifact", wire.Part{Kind: "artifact", Name: "f.txt", MediaType: "text/plain", Digest: digest, Size: int64p(0)},
			`{"kind":"artifact","name":"f.txt","mediaType":"text/plain","digest":"` + digest + `","size":0}`},
		{"extension", wire.Part{Kind: "com.example.poll", Extra: map[string]json.RawMessage{"q": json.RawMessage(`"why?"`), "opts": json.RawMessage(`[1,2]`)}},
			`{"kind":"com.example.poll","opts":[1,2],"q":"why?"}`},
		{"extra never overrides kind", wire.Part{Kind: "x.y", Extra: map[string]json.RawMessage{"kind": json.RawMessage(`"evil"`)}}, `{"kind":"x.y"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.part)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("Marshal = %s, want %s", b, tt.want)
			}
		})
	}
}

func TestPartMarshalInvalidJSON(t *testing.T) {
	for _, p := range []wire.Part{
		{Kind: "data", Data: json.RawMessage(`{`)},
		{Kind: "x.y", Extra: map[string]json.RawMessage{"a": json.RawMessage(`nope`)}},
	} {
		if b, err := json.Marshal(p); err == nil {
			t.Errorf("Marshal(%+v) = %s, want an error", p, b)
		}
	}
}

func TestPartUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    wire.Part
		wantErr bool
	}{
		{name: "text", in: `{"kind":"text","text":"hi"}`, want: wire.Part{Kind: "text", Text: "hi"}},
		{name: "text unknown field ignored", in: `{"kind":"text","text":"hi","lang":"en"}`, want: wire.Part{Kind: "text", Text: "hi"}},
		{name: "data", in: `{"kind":"data","data":[1, 2]}`, want: wire.Part{Kind: "data", Data: json.RawMessage(`[1, 2]`)}},
		{name: "artifact", in: `{"kind":"artifact","name":"f","mediaType":"a/b","digest":"` + digest + `","size":12}`,
			want: wire.Part{Kind: "artifact", Name: "f", MediaType: "a/b", Digest: digest, Size: int64p(12)}},
		{name: "extension keeps fields", in: `{"kind":"com.example.poll","q":"why?","name":7}`,
			want: wire.Part{Kind: "com.example.poll", Extra: map[string]json.RawMessage{"q": json.RawMessage(`"why?"`), "name": json.RawMessage(`7`)}}},
		{name: "null is no-op", in: `null`, want: wire.Part{}},
		{name: "missing kind", in: `{"text":"hi"}`, wantErr: true},
		{name: "kind not string", in: `{"kind":5}`, wantErr: true},
		{name: "text not string", in: `{"kind":"text","text":5}`, wantErr: true},
		{name: "size fractional", in: `{"kind":"artifact","size":1.5}`, wantErr: true},
		{name: "not object", in: `[1]`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got wire.Part
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Unmarshal(%s) = %+v, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Unmarshal(%s) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestExtensionPartRoundTrip(t *testing.T) {
	in := `{"kind":"com.example.poll","name":{"x":1},"opts":["a","b"],"q":"why?"}`
	var p wire.Part
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Fatalf("round trip = %s, want %s", out, in)
	}
}
