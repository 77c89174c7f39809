package wire

import (
	"reflect"
	"strings"
	"testing"
)

func TestCredTagsRoundTripThroughLowercasing(t *testing.T) {
	lists := [][]string{nil, {}, {"Team.Backend", "ops.>"}, {"a.*.C"}}
	for _, l := range lists {
		// The broker lowercases every tag; the lists must survive it.
		tags := []string{
			strings.ToLower(TagUID + "abc"),
			strings.ToLower(EncodeListTag(TagSubscribe, l)),
			strings.ToLower(EncodeListTag(TagSpace, []string{"My-Space"})),
			"unrelated:tag",
		}
		got := DecodeCredTags(tags)
		want := l
		if want == nil {
			want = []string{}
		}
		if !reflect.DeepEqual(got.Subscribe, want) || !got.HasLists {
			t.Errorf("subscribe %v: got %v", l, got.Subscribe)
		}
		if got.Space != "My-Space" || got.UID != "abc" {
			t.Errorf("space/uid: got %q %q", got.Space, got.UID)
		}
	}
}

func FuzzDecodeCredTags(f *testing.F) {
	f.Add(EncodeListTag(TagAllowPub, []string{"x.y"}))
	f.Add(TagAllowSub + "!!!")
	f.Fuzz(func(t *testing.T, tag string) {
		_ = DecodeCredTags([]string{tag}) // must never panic
	})
}

func FuzzParseCreds(f *testing.F) {
	f.Add([]byte("-----BEGIN NATS USER JWT-----\na.b.c\n------END NATS USER JWT------\n"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseCreds(b) // must never panic
	})
}
