package mcp_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// TestInboxToolTakesEveryPartKind: DMs carrying parts of every kind a peer
// may send (the schema's own with extra fields, an extension kind, and a
// "file" part the schema does not define) come out of cotal_inbox, each
// saying what else it carried; none stops the inbox or hides the others.
func TestInboxToolTakesEveryPartKind(t *testing.T) {
	h := startMesh(t)
	alice := h.mint("alice", "", []string{}, nil)
	c := standalone(t, h, alice)
	c.ok("cotal_orientation", nil)
	parts := []string{
		`{"kind":"file","name":"secret.txt","uri":"file:///etc/passwd"}`,
		`{"kind":"com.example.note","body":{"deep":true}}`,
		`{"kind":"data","data":{"k":1},"extra":"x"}`,
		`{"kind":"artifact","name":"r.txt","mediaType":"text/plain","digest":"sha256:` + strings.Repeat("b", 64) + `","size":3,"url":"x"}`,
	}
	var msgs []*nats.Msg
	for i, p := range parts {
		body := fmt.Sprintf(`{"id":"odd%d","ts":1,"space":%q,"from":{"id":"local.mallory","name":"mallory"},"to":"local.alice","parts":[%s,{"kind":"text","text":"marker %d"}]}`, i, space, p, i)
		msgs = append(msgs, &nats.Msg{Subject: wire.DMSubject(space, wire.Principal{Owner: "local", Actor: "alice"}, wire.Principal{Owner: "local", Actor: "mallory"}), Data: []byte(body)})
	}
	testmesh.Store(t, h.op, msgs...)
	c.waitText("cotal_inbox", map[string]any{"peek": true}, holding("marker 0", "marker 1", "marker 2", "marker 3",
		`file part "secret.txt"`, "com.example.note part", "data part", `artifact part "r.txt"`))
}
