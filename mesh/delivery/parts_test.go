package delivery_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// oddParts are the part kinds peers put in messages: each of the schema's
// own kinds with fields it does not define, an extension kind with fields
// of its own, and kinds the schema does not define at all ("file" is what
// one harness sends).
var oddParts = []string{
	`{"kind":"text","text":"plain","lang":"en"}`,
	`{"kind":"data","data":{"k":[1,2]},"schema":"x"}`,
	`{"kind":"artifact","name":"r.txt","mediaType":"text/plain","digest":"sha256:` + strings.Repeat("a", 64) + `","size":3,"url":"file:///etc/passwd"}`,
	`{"kind":"com.example.note","body":{"deep":true},"n":7}`,
	`{"kind":"file","name":"secret.txt","uri":"file:///etc/passwd","bytes":"c2VjcmV0"}`,
	`{"kind":"image","mediaType":"image/png","data":"iVBORw0KGgo="}`,
}

// TestEveryPartKindPassesTheInbox: a DM carrying any part a peer may send
// never stops the recipient's inbox; before, one DM with a file part made
// every take fail ("take produced output outside its schema") and hid the
// DMs batched with it, forever.
func TestEveryPartKindPassesTheInbox(t *testing.T) {
	h := newHarness(t, false)
	alicePath, alice := h.mint(agent{name: "alice"})
	_, mallory := h.mint(agent{name: "mallory"})
	var msgs []*nats.Msg
	for i, p := range oddParts {
		body := fmt.Sprintf(`{"id":"odd%d","ts":1,"space":%q,"from":{"id":"local.mallory","name":"mallory"},"to":"local.alice","parts":[%s,{"kind":"text","text":"marker %d"}]}`, i, space, p, i)
		msgs = append(msgs, &nats.Msg{Subject: wire.DMSubject(space, alice.Principal, mallory.Principal), Data: []byte(body)})
	}
	testmesh.Store(t, h.op, msgs...)
	e := h.connect(alicePath, mesh.Options{OneShot: true, Subscribe: []string{}})
	post(t, h.poster("bob"), "team", "unrelated") // a reader that keeps working after the odd DMs
	var got []string
	for len(got) < len(oddParts) {
		items := collect(t, e, 0)
		if len(items) == 0 {
			break
		}
		for _, it := range items {
			got = append(got, it.Msg.Text())
		}
	}
	for i := range oddParts {
		want := fmt.Sprintf("marker %d", i)
		found := false
		for _, g := range got {
			found = found || strings.Contains(g, want)
		}
		if !found {
			t.Errorf("DM %d (%s) did not reach alice's inbox; got %q", i, oddParts[i], got)
		}
	}
}
