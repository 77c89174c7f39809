package wire_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

func TestTextParts(t *testing.T) {
	got := wire.TextParts("hi")
	want := []wire.Part{{Kind: wire.PartText, Text: "hi"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TextParts = %+v, want %+v", got, want)
	}
}

func TestMessageText(t *testing.T) {
	size := int64(3)
	tests := []struct {
		name  string
		parts []wire.Part
		want  string
	}{
		{"none", nil, ""},
		{"one", wire.TextParts("hello"), "hello"},
		{"joined", []wire.Part{{Kind: "text", Text: "a"}, {Kind: "data", Data: json.RawMessage(`1`)}, {Kind: "text", Text: "b"}}, "a\nb"},
		{"no text", []wire.Part{{Kind: "artifact", Name: "f", Size: &size}}, ""},
		{"empty text kept", []wire.Part{{Kind: "text"}, {Kind: "text", Text: "b"}}, "\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (wire.Message{Parts: tt.parts}).Text(); got != tt.want {
				t.Errorf("Text() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNormalizeMentions(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"nil", nil, nil},
		{"all empty", []string{"", "  "}, nil},
		{"lower and trim", []string{" Alice ", "BOB"}, []string{"alice", "bob"}},
		{"dedupe keeps first order", []string{"bob", "Alice", "BOB", "alice", "carol"}, []string{"bob", "alice", "carol"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wire.NormalizeMentions(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("NormalizeMentions(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestMessageJSON(t *testing.T) {
	m := wire.Message{
		ID:      "id1",
		TS:      1700000000000,
		Space:   "main",
		From:    wire.Sender{ID: ownerA + ".alice", Name: "Alice"},
		Channel: "team",
		Parts:   wire.TextParts("hi"),
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"id1","ts":1700000000000,"space":"main","from":{"id":"` + ownerA + `.alice","name":"Alice"},"channel":"team","parts":[{"kind":"text","text":"hi"}]}`
	if string(b) != want {
		t.Fatalf("Marshal =\n%s\nwant\n%s", b, want)
	}
	var back wire.Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip = %+v, want %+v", back, m)
	}
}
