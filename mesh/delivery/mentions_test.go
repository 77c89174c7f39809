package delivery_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

func TestResolveMentionsSaysWhetherEachGetsAStoredCopy(t *testing.T) {
	h := newHarness(t, false)
	h.setClass("live", mesh.ClassLive)
	carolPath, _ := h.mint(agent{name: "carol", allowSub: []string{"live"}}) // never connected
	h.mint(agent{name: "dave", allowSub: []string{"other"}})
	h.mint(agent{name: "gone", allowSub: []string{"live"}})
	_, gone := h.mint(agent{name: "gone", allowSub: []string{"live"}})
	for _, owner := range []string{"local", "u_abcdefghijklmnopqrstuvwxyz"} {
		testmesh.Mint(t, h.b, broker.Identity{Space: space, Principal: wire.Principal{Owner: owner, Actor: "erin"}, AllowSubscribe: []string{"live"}, AllowPublish: []string{}})
	}
	if err := h.svc.EndLifecycle(ctxT(t), gone.Principal, gone.UID); err != nil {
		t.Fatal(err)
	}
	p := h.poster("poster")
	sender := wire.Principal{Owner: "local", Actor: "poster"}
	ms, err := h.svc.ResolveMentions(ctxT(t), sender, "live", []string{"Carol", "dave", "nobody", "erin", "poster", "gone"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, fmt.Sprintf("%s:%v:%s", m.Name, m.Stored, m.Reason))
	}
	// gone's older lifecycle still lives: the mention is stored for it, not
	// for the one that ended.
	want := "carol:true:|dave:false:not-reader|nobody:false:unknown|erin:false:ambiguous|poster:false:self|gone:true:"
	if strings.Join(got, "|") != want {
		t.Fatalf("resolutions %s\nwant %s", strings.Join(got, "|"), want)
	}
	if ms[5].LifecycleUID == gone.UID {
		t.Fatalf("the mention of gone resolved to its ended lifecycle %s", gone.UID)
	}

	// The fan-out stores exactly that: carol, who never connected and is on
	// no roster, gets her copy.
	post(t, p, "live", "for carol", mesh.WithMentions("carol"))
	h.settled()
	if got := texts(collect(t, h.connect(carolPath, mesh.Options{OneShot: true, Subscribe: []string{}}), 2*time.Second)); !equal(got, []string{"for carol"}) {
		t.Fatalf("carol got %v", got)
	}
}
