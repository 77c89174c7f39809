package ep

import (
	"encoding/json"
	"testing"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/nats-io/nats.go"
)

// TestGatherAttribution is the per-frame table of scatter attribution (checklist 25, 26): first valid reply per frozen (iid, epoch) counts; the rest are classified, never dropped.
func TestGatherAttribution(t *testing.T) {
	caller := proto.Caller{Owner: "local", Actor: "tester", UID: "cccccccccccccccccccccccccc"}
	nonce := proto.NewNonce()
	reply := func(iid string, epoch uint64, id string) *nats.Msg {
		subj, err := proto.Reply{Space: "s", Endpoint: "e", InstanceID: iid, Epoch: epoch, Caller: caller, Nonce: nonce}.Subject()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(proto.OKReply(id, json.RawMessage(`1`)))
		return &nats.Msg{Subject: subj, Data: b}
	}
	bad := reply("a", 1, "req")
	bad.Data = []byte(`{"v":1,"id":"req","ok":false}`)
	frames := []struct {
		name string
		m    *nats.Msg
		late bool
	}{
		{"counted a", reply("a", 1, "req"), false},
		{"duplicate a", reply("a", 1, "req"), false},
		{"churn epoch b", reply("b", 3, "req"), false},
		{"unexpected c", reply("c", 1, "req"), false},
		{"invalid body", bad, false},
		{"invalid id", reply("b", 2, "other"), false},
		{"invalid subject", &nats.Msg{Subject: "cotal.s.ep.reply.x", Data: []byte(`{}`)}, false},
		{"late b", reply("b", 2, "req"), true},
	}
	g := newGather([]Slot{{InstanceID: "a", RegistrationRevision: 1, Epoch: 1}, {InstanceID: "b", RegistrationRevision: 2, Epoch: 2}}, "req", caller, nonce)
	for _, f := range frames {
		g.take(f.m, f.late)
	}
	r := g.result()
	counts := map[string]int{"replies": len(r.Replies), "duplicate": len(r.Duplicate), "churn": len(r.Churn), "unexpected": len(r.Unexpected),
		"invalid": len(r.Invalid), "late": len(r.Late), "missing": len(r.Missing)}
	want := map[string]int{"replies": 1, "duplicate": 1, "churn": 1, "unexpected": 1, "invalid": 3, "late": 1, "missing": 1}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("%s: %d, want %d", k, counts[k], v)
		}
	}
	if r.Churn[0].Reason != ChurnEpoch || r.Missing[0].InstanceID != "b" {
		t.Fatalf("%+v", r)
	}
}
