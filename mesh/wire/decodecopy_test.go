package wire_test

import (
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

func TestDecodeCopy(t *testing.T) {
	tests := []struct {
		name string
		data string
		want wire.Reject
		text string
	}{
		// The receive rules, not the publisher's: these are all owed.
		{"empty id", `{"id":"",` + fromA + `,"parts":[{"kind":"text","text":"a"}]}`, "", "a"},
		{"no parts", `{"id":"x","ts":1,` + fromA + `,"parts":[]}`, "", ""},
		{"no ts", `{"id":"x",` + fromA + `,"parts":[{"kind":"text","text":"b"}]}`, "", "b"},
		{"routing from the frame", `{"id":"x",` + fromA + `,"to":"` + ownerB + `.bob","parts":[]}`, "", ""},
		{"not json", `{"id":`, wire.RejectMalformedJSON, ""},
		{"not an object", `[1]`, wire.RejectNotObject, ""},
		{"id absent", `{` + fromA + `}`, wire.RejectBadID, ""},
		{"from absent", `{"id":"x"}`, wire.RejectSenderMismatch, ""},
		{"from id not a principal", `{"id":"x","from":{"id":"."}}`, wire.RejectSenderMismatch, ""},
		{"nkey owner", `{"id":"x","from":{"id":"` + nkey + `.team"}}`, wire.RejectSenderMismatch, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, reject, err := wire.DecodeCopy("main", "team.backend", []byte(tt.data))
			if reject != tt.want {
				t.Fatalf("reject %q (%v), want %q", reject, err, tt.want)
			}
			if reject != "" {
				return
			}
			if d.Subject.Kind != wire.KindChannel || d.Subject.Channel != "team.backend" || d.Msg.Channel != "team.backend" || d.Msg.To != "" {
				t.Fatalf("routed as %+v / %+v; want channel team.backend from the frame", d.Subject, d.Msg)
			}
			if d.Msg.Text() != tt.text || d.Msg.From.ID != d.Subject.Sender.ID() {
				t.Fatalf("decoded %+v", d.Msg)
			}
		})
	}
	if _, reject, _ := wire.DecodeCopy("main", "team.*", []byte(`{"id":"x",`+fromA+`}`)); reject != wire.RejectMalformedSubject {
		t.Fatalf("a pattern as the frame's channel: reject %q", reject)
	}
}

// FuzzDecodeCopy checks DecodeCopy never panics and accepts only a
// surfaceable sender whose id is from.id, routed to the frame's channel.
func FuzzDecodeCopy(f *testing.F) {
	f.Add("team", []byte(`{"id":"","ts":1,"space":"main",`+fromA+`,"parts":[]}`))
	f.Add("team.backend", []byte(`{"id":"m","from":{"id":"`+ownerB+`.bob"},"to":"x"}`))
	f.Add("team", []byte(`{"id":"m","from":{"id":"."}}`))
	f.Fuzz(func(t *testing.T, channel string, data []byte) {
		d, reject, err := wire.DecodeCopy("main", channel, data)
		if reject != "" {
			if err == nil {
				t.Fatalf("reject %q without an error", reject)
			}
			return
		}
		if d.Msg.From.ID != d.Subject.Sender.ID() || d.Subject.Surfaceable() != nil {
			t.Fatalf("accepted sender %q for from.id %q", d.Subject.Sender.ID(), d.Msg.From.ID)
		}
		if d.Msg.Channel != channel || d.Msg.To != "" || d.Msg.ToService != "" || wire.ValidateConcreteChannel(channel) != nil {
			t.Fatalf("accepted %+v on channel %q", d.Msg, channel)
		}
	})
}
