package wire

import (
	"encoding/json"
	"testing"
)

func TestDecodeEscapedAndRepeatedKeys(t *testing.T) {
	subj := "cotal.s.chat.local.a.team"
	// An escaped key is still the key; case is not folded.
	d, r, err := Decode(subj, []byte(`{"\u0069d":"x","ts":1,"from":{"id":"local.a","name":"a"},"parts":[{"kind":"text","text":"t\"q"}]}`))
	if r != "" || d.Msg.ID != "x" || d.Msg.Text() != `t"q` {
		t.Fatalf("escaped key: %+v %s %v", d.Msg, r, err)
	}
	if _, r, _ := Decode(subj, []byte(`{"ID":"x","from":{"id":"local.a"}}`)); r != RejectBadID {
		t.Fatalf("ID matched id case-insensitively: %s", r)
	}
	// The last of a repeated key wins, as encoding/json does.
	d, _, _ = Decode(subj, []byte(`{"id":"first","id":"last","from":{"id":"local.a"}}`))
	if d.Msg.ID != "last" {
		t.Fatalf("repeated key: got %q", d.Msg.ID)
	}
}

func TestMembersMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"]}"}], "d" : {"e":"\"}"} ,"f":null,"g":-1.5e3,"h":true } `,
		`{"a":"\\"}`, `{"a":[[],[[]]]}`,
	} {
		want := map[string]json.RawMessage{}
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		if !members([]byte(in), func(k, v []byte) { got[string(keyBytes(k))] = string(v) }) {
			t.Fatalf("%s: not an object", in)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %v vs %v", in, got, want)
		}
		for k, v := range want {
			if got[k] != string(v) {
				t.Errorf("%s: key %s: %q want %q", in, k, got[k], v)
			}
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	subj := "cotal.conf.chat.local.sender.team"
	data := []byte(`{"id":"6f1c2a52-3b1e-4f7e-9b8a-0d1e2f3a4b5c","ts":1796008780950,"space":"conf","from":{"id":"local.sender","name":"sender"},"channel":"team","parts":[{"kind":"text","text":"hello"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, r, _ := Decode(subj, data); r != "" {
			b.Fatal(r)
		}
	}
}
