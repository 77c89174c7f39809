package wire_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

var (
	chatSubj = "cotal.main.chat." + ownerA + ".alice.team.backend"
	dmSubj   = "cotal.main.inst." + ownerB + ".bob." + ownerA + ".alice"
	svcSubj  = "cotal.main.svc.reviewer." + ownerA + ".alice"
	fromA    = `"from":{"id":"` + ownerA + `.alice","name":"Alice","role":"dev"}`
)

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name    string
		subject string
		data    string
		want    wire.Reject
	}{
		{"malformed json", chatSubj, `{"id":"x",`, wire.RejectMalformedJSON},
		{"empty payload", chatSubj, ``, wire.RejectMalformedJSON},
		{"malformed json beats bad subject", "nope", `{`, wire.RejectMalformedJSON},
		{"null", chatSubj, `null`, wire.RejectNotObject},
		{"array", chatSubj, `[{"id":"x"}]`, wire.RejectNotObject},
		{"string", chatSubj, `"x"`, wire.RejectNotObject},
		{"number", chatSubj, ` 42 `, wire.RejectNotObject},
		{"id absent", chatSubj, `{` + fromA + `}`, wire.RejectBadID},
		{"id number", chatSubj, `{"id":7,` + fromA + `}`, wire.RejectBadID},
		{"id null", chatSubj, `{"id":null,` + fromA + `}`, wire.RejectBadID},
		{"id wrong case key", chatSubj, `{"ID":"x",` + fromA + `}`, wire.RejectBadID},
		{"bad id beats bad subject", "nope", `{"id":1}`, wire.RejectBadID},
		{"subject no channel", "cotal.main.chat." + ownerA + ".alice", `{"id":"x",` + fromA + `}`, wire.RejectMalformedSubject},
		{"retired ctl", "cotal.main.ctl.manager." + ownerA + ".alice", `{"id":"x",` + fromA + `}`, wire.RejectMalformedSubject},
		{"from absent", chatSubj, `{"id":"x"}`, wire.RejectSenderMismatch},
		{"from string", chatSubj, `{"id":"x","from":"` + ownerA + `.alice"}`, wire.RejectSenderMismatch},
		{"from id absent", chatSubj, `{"id":"x","from":{"name":"a"}}`, wire.RejectSenderMismatch},
		{"from id number", chatSubj, `{"id":"x","from":{"id":1}}`, wire.RejectSenderMismatch},
		{"from spoofed", chatSubj, `{"id":"x","from":{"id":"` + ownerB + `.bob"}}`, wire.RejectSenderMismatch},
		{"dm from is recipient", dmSubj, `{"id":"x","from":{"id":"` + ownerB + `.bob"}}`, wire.RejectSenderMismatch},
		{"nkey owner", "cotal.main.chat." + nkey + ".team.backend", `{"id":"x","from":{"id":"` + nkey + `.team"}}`, wire.RejectSenderMismatch},
		{"made-up owner", "cotal.main.chat.mallory.a.c", `{"id":"x","from":{"id":"mallory.a"}}`, wire.RejectSenderMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, reject, err := wire.Decode(tt.subject, []byte(tt.data))
			if reject != tt.want {
				t.Fatalf("Decode reject = %q (%v), want %q", reject, err, tt.want)
			}
			if err == nil {
				t.Errorf("rejected without an error")
			}
			if !reflect.DeepEqual(d, wire.Delivery{}) {
				t.Errorf("rejected delivery is not zero: %+v", d)
			}
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	tests := []struct {
		name    string
		subject string
		data    string
		want    wire.Message
	}{
		{
			name:    "chat",
			subject: chatSubj,
			data:    `{"id":"m1","ts":1700000000000,"space":"main",` + fromA + `,"channel":"team.backend","parts":[{"kind":"text","text":"hi"}],"replyTo":"m0","contextId":"c1"}`,
			want: wire.Message{ID: "m1", TS: 1700000000000, Space: "main", From: wire.Sender{ID: ownerA + ".alice", Name: "Alice", Role: "dev"},
				Channel: "team.backend", Parts: wire.TextParts("hi"), ReplyTo: "m0", ContextID: "c1"},
		},
		{
			name:    "forged to overridden by chat subject",
			subject: chatSubj,
			data:    `{"id":"m2",` + fromA + `,"to":"` + ownerB + `.bob","toService":"ops","channel":"other"}`,
			want:    wire.Message{ID: "m2", From: wire.Sender{ID: ownerA + ".alice", Name: "Alice", Role: "dev"}, Channel: "team.backend"},
		},
		{
			name:    "forged channel overridden by inst subject",
			subject: dmSubj,
			data:    `{"id":"m3",` + fromA + `,"channel":"team","toService":"ops"}`,
			want:    wire.Message{ID: "m3", From: wire.Sender{ID: ownerA + ".alice", Name: "Alice", Role: "dev"}, To: ownerB + ".bob"},
		},
		{
			name:    "forged to overridden by svc subject",
			subject: svcSubj,
			data:    `{"id":"m4",` + fromA + `,"to":"` + ownerB + `.bob"}`,
			want:    wire.Message{ID: "m4", From: wire.Sender{ID: ownerA + ".alice", Name: "Alice", Role: "dev"}, ToService: "reviewer"},
		},
		{
			name:    "empty id",
			subject: chatSubj,
			data:    `{"id":"",` + fromA + `}`,
			want:    wire.Message{From: wire.Sender{ID: ownerA + ".alice", Name: "Alice", Role: "dev"}, Channel: "team.backend"},
		},
		{
			name:    "lenient fields",
			subject: chatSubj,
			data: `{"id":"m5","ts":"yesterday","space":7,"from":{"id":"` + ownerA + `.alice","name":5},"mentions":[" Bob",3,"bob","ALICE"],` +
				`"parts":[{"kind":"text","text":"a"},{"kind":5},"junk",{"kind":"artifact","size":"big"},{"kind":"com.x.y","v":1},{"kind":"text","text":"b"}],"extra":{"x":1}}`,
			want: wire.Message{ID: "m5", From: wire.Sender{ID: ownerA + ".alice"}, Channel: "team.backend", Mentions: []string{"bob", "alice"},
				Parts: []wire.Part{{Kind: "text", Text: "a"}, {Kind: "com.x.y", Extra: map[string]json.RawMessage{"v": json.RawMessage(`1`)}}, {Kind: "text", Text: "b"}}},
		},
		{
			name:    "float ts truncated",
			subject: chatSubj,
			data:    `{"id":"m6","ts":1.7e12,` + fromA + `,"parts":{"kind":"text"}}`,
			want:    wire.Message{ID: "m6", TS: 1700000000000, From: wire.Sender{ID: ownerA + ".alice", Name: "Alice", Role: "dev"}, Channel: "team.backend"},
		},
		{
			name:    "whitespace everywhere",
			subject: chatSubj,
			data:    " \n{ \"id\" : \"m7\" , \"from\" : { \"id\" : \"" + ownerA + ".alice\" } }\n",
			want:    wire.Message{ID: "m7", From: wire.Sender{ID: ownerA + ".alice"}, Channel: "team.backend"},
		},
		{
			name:    "local owner",
			subject: "cotal.dev.chat.local.c1.general",
			data:    `{"id":"m8","from":{"id":"local.c1"}}`,
			want:    wire.Message{ID: "m8", From: wire.Sender{ID: "local.c1"}, Channel: "general"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, reject, err := wire.Decode(tt.subject, []byte(tt.data))
			if reject != "" || err != nil {
				t.Fatalf("Decode rejected: %q %v", reject, err)
			}
			if !reflect.DeepEqual(d.Msg, tt.want) {
				t.Fatalf("Msg =\n%+v\nwant\n%+v", d.Msg, tt.want)
			}
			wantSub, _ := wire.ParseSubject(tt.subject)
			if d.Subject != wantSub {
				t.Errorf("Subject = %+v, want %+v", d.Subject, wantSub)
			}
		})
	}
}

// TestDecodeEmptyIDsIndependent: two id:"" messages are both delivered; the empty id is never a dedup key.
func TestDecodeEmptyIDsIndependent(t *testing.T) {
	for i, body := range []string{"first", "second"} {
		data := `{"id":"",` + fromA + `,"parts":[{"kind":"text","text":"` + body + `"}]}`
		d, reject, err := wire.Decode(chatSubj, []byte(data))
		if reject != "" || err != nil {
			t.Fatalf("message %d rejected: %q %v", i, reject, err)
		}
		if d.Msg.ID != "" || d.Msg.Text() != body {
			t.Fatalf("message %d = %+v", i, d.Msg)
		}
	}
}

// TestDecodeRoundTripsPublished: whatever a valid publisher sends decodes to the same message.
func TestDecodeRoundTripsPublished(t *testing.T) {
	m := validMessage()
	m.Mentions = []string{"bob"}
	m.Parts = append(m.Parts, artifact(func(*wire.Part) {}), wire.Part{Kind: "data", Data: json.RawMessage(`{"k":[true]}`)})
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := wire.ChatSubject(m.Space, alice, m.Channel)
	if err != nil {
		t.Fatal(err)
	}
	d, reject, err := wire.Decode(subject, data)
	if reject != "" || err != nil {
		t.Fatalf("rejected: %q %v", reject, err)
	}
	if !reflect.DeepEqual(d.Msg, m) {
		t.Fatalf("decoded =\n%+v\nwant\n%+v", d.Msg, m)
	}
}

// FuzzDecode checks Decode never panics and never accepts a message whose from.id is not the subject's sender.
func FuzzDecode(f *testing.F) {
	f.Add(chatSubj, []byte(`{"id":"m1","ts":1,"space":"main",`+fromA+`,"parts":[{"kind":"text","text":"hi"}]}`))
	f.Add(dmSubj, []byte(`{"id":"",`+fromA+`,"channel":"x"}`))
	f.Add(svcSubj, []byte(`{"id":"m","from":{"id":"`+ownerB+`.bob"}}`))
	f.Add(chatSubj, []byte(`[]`))
	f.Fuzz(func(t *testing.T, subject string, data []byte) {
		d, reject, err := wire.Decode(subject, data)
		if reject != "" {
			if err == nil {
				t.Fatalf("reject %q without an error", reject)
			}
			return
		}
		if err != nil {
			t.Fatalf("accepted with error %v", err)
		}
		if d.Msg.From.ID != d.Subject.Sender.ID() {
			t.Fatalf("accepted from.id %q on subject sender %q", d.Msg.From.ID, d.Subject.Sender.ID())
		}
		if err := d.Subject.Surfaceable(); err != nil {
			t.Fatalf("accepted an unsurfaceable sender: %v", err)
		}
		routes := 0
		for _, r := range []string{d.Msg.Channel, d.Msg.To, d.Msg.ToService} {
			if r != "" {
				routes++
			}
		}
		if routes != 1 {
			t.Fatalf("accepted message has %d routing fields: %+v", routes, d.Msg)
		}
		if _, err := json.Marshal(d.Msg); err != nil {
			t.Fatalf("accepted message does not marshal: %v", err)
		}
	})
}
