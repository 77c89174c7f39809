package proto_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// TestCanonicalNumbers are the ECMAScript Number.prototype.toString vectors RFC 8785 relies on.
func TestCanonicalNumbers(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", "0"},
		{"-0", "0"},
		{"0.0", "0"},
		{"1", "1"},
		{"-1", "-1"},
		{"1.0", "1"},
		{"10", "10"},
		{"1e21", "1e+21"},
		{"1e20", "100000000000000000000"},
		{"999999999999999900000", "999999999999999900000"},
		{"1e-7", "1e-7"},
		{"1e-6", "0.000001"},
		{"0.000001234", "0.000001234"},
		{"0.1", "0.1"},
		{"-1.5", "-1.5"},
		{"123456789012345680000", "123456789012345680000"},
		{"5e-324", "5e-324"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
		{"-1.7976931348623157e308", "-1.7976931348623157e+308"},
		{"9007199254740993", "9007199254740992"},
		{"333333333.33333329", "333333333.3333333"},
		{"1E3", "1000"},
		{"1.5e-9", "1.5e-9"},
		{"4.5e22", "4.5e+22"},
		{"1e-400", "0"},
	}
	for _, tt := range tests {
		got, err := proto.Canonical([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("Canonical(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestCanonicalStrings(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/"`, "\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\""},
		{`"\b\f\t\r\u0001\u001f"`, `"\b\f\t\r\u0001\u001f"`},
		{`"\u007f\u2028<>&"`, "\"\x7f\u2028<>&\""},
		{`"\ud83d\ude00"`, `"😀"`},
		{`"😀"`, `"😀"`},
	}
	for _, tt := range tests {
		got, err := proto.Canonical([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("Canonical(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// TestCanonicalKeyOrder sorts by UTF-16 code units: U+1F600 is the surrogate pair D83D DE00, so it sorts after U+20AC but before U+FB33, though its code point is the largest.
func TestCanonicalKeyOrder(t *testing.T) {
	in := `{"\ufb33":5,"\u20ac":3,"\ud83d\ude00":2,"b":1,"a":{"z":0,"y":[3,{"d":1,"c":2}]},"":0,"A":9,"\u0080":4}`
	want := `{"":0,"A":9,"a":{"y":[3,{"c":2,"d":1}],"z":0},"b":1,"` + "\u0080" + `":4,"€":3,"😀":2,"` + "\ufb33" + `":5}`
	got, err := proto.Canonical([]byte(in))
	if err != nil || string(got) != want {
		t.Fatalf("Canonical = %s, %v; want %s", got, err, want)
	}
}

// TestCanonicalRFC8785Example is the sample of RFC 8785 §3.2.2.
func TestCanonicalRFC8785Example(t *testing.T) {
	in := `{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	got, err := proto.Canonical([]byte(in))
	if err != nil || string(got) != want {
		t.Fatalf("Canonical = %s, %v; want %s", got, err, want)
	}
}

func TestCanonicalWhitespaceInsensitive(t *testing.T) {
	a := `{"b":[1,2,{"x":"y"}],"a":true}`
	b := "\n{ \"a\" : true ,\r\n\t\"b\" : [ 1 , 2.0 , { \"x\" : \"\\u0079\" } ] }\n"
	da, err := proto.Digest([]byte(a))
	if err != nil {
		t.Fatal(err)
	}
	db, err := proto.Digest([]byte(b))
	if err != nil || da != db {
		t.Fatalf("digests differ: %s vs %s (%v)", da, db, err)
	}
	if !proto.ValidDigest(da) {
		t.Fatalf("digest %q is not sha256:<hex>", da)
	}
}

func TestCanonicalRefuses(t *testing.T) {
	tests := []struct {
		name, in string
		kind     error
	}{
		{"duplicate key", `{"a":1,"a":2}`, proto.ErrDuplicateKey},
		{"nested duplicate key", `[{"x":{"k":1,"k":1}}]`, proto.ErrDuplicateKey},
		{"escaped duplicate key", `{"a":1,"\u0061":2}`, proto.ErrDuplicateKey},
		{"overflow", `1e309`, proto.ErrNumberRange},
		{"negative overflow", `[-1e400]`, proto.ErrNumberRange},
		{"lone high surrogate", `"\ud83d"`, proto.ErrInvalidText},
		{"lone low surrogate", `"\ude00x"`, proto.ErrInvalidText},
		{"reversed pair", `"\ude00\ud83d"`, proto.ErrInvalidText},
		{"invalid UTF-8", "\"\xff\"", proto.ErrInvalidText},
		{"UTF-8 surrogate", "\"\xed\xa0\x80\"", proto.ErrInvalidText},
		{"empty", ``, proto.ErrInvalidJSON},
		{"two values", `1 2`, proto.ErrInvalidJSON},
		{"trailing comma", `[1,]`, proto.ErrInvalidJSON},
		{"leading zero", `01`, proto.ErrInvalidJSON},
		{"bare dot", `1.`, proto.ErrInvalidJSON},
		{"plus sign", `+1`, proto.ErrInvalidJSON},
		{"NaN", `NaN`, proto.ErrInvalidJSON},
		{"raw newline in string", "\"a\nb\"", proto.ErrInvalidJSON},
		{"single quotes", `'a'`, proto.ErrInvalidJSON},
		{"unquoted key", `{a:1}`, proto.ErrInvalidJSON},
		{"bad escape", `"\x"`, proto.ErrInvalidJSON},
		{"too deep", strings.Repeat("[", 10001) + strings.Repeat("]", 10001), proto.ErrInvalidJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := proto.Canonical([]byte(tt.in)); !errors.Is(err, tt.kind) {
				t.Fatalf("Canonical = %s, %v; want %v", got, err, tt.kind)
			}
		})
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[true,false,null,"x"]}`,
		`[1e21, 1e-7, -0, 0.1, 5e-324, 9007199254740993]`,
		`{"\u20ac":1,"\ud83d\ude00":2}`,
		`"\u0000\u001f\\\"/"`,
		`{"a":1,"a":2}`,
		`  {"n" : { "m" : [ ] } }  `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := proto.Canonical(in)
		if err != nil {
			if errors.Is(err, proto.ErrInvalidJSON) && json.Valid(in) {
				t.Fatalf("refused valid JSON %q as syntax: %v", in, err)
			}
			return
		}
		again, err := proto.Canonical(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, out, again, err)
		}
		var want, got any
		if err := json.Unmarshal(in, &want); err != nil {
			t.Fatalf("accepted %q that encoding/json refuses: %v", in, err)
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("output %q does not parse: %v", out, err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("value changed: %q -> %q", in, out)
		}
	})
}
