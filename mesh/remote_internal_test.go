package mesh

import (
	"errors"
	"testing"

	"github.com/cotal-go/cotal/mesh/wire"
)

// A taken item its reader gives back the moment it is queued (a peek that
// races the take which brought it) comes back when the service hands it
// over again, and a duplicate leaves the handle of the copy on record.
// The reader is played by the inbox's arrival hook, which runs as the item
// is queued.
func TestATakenItemGivenBackAtOnceComesBack(t *testing.T) {
	alice, carol := wire.Principal{Owner: "local", Actor: "alice"}, wire.Principal{Owner: "local", Actor: "carol"}
	e := &Endpoint{space: "s", me: alice, inbox: newInbox()}
	e.remote.once.Do(func() {})
	e.remote.err = errors.New("this test has no delivery service: settles go nowhere")
	gaveBack := 0
	e.inbox.noter = func(*Item) func(string, string) {
		return func(rung, _ string) {
			if rung != wire.RungTaken || gaveBack > 0 {
				return
			}
			gaveBack++
			for _, it := range e.inbox.take(1) {
				_ = it.Release()
			}
		}
	}
	taken := func(key string) TakenItem {
		return TakenItem{
			Key: key, Kind: wire.KindDM, Subject: wire.DMSubject("s", alice, carol),
			Msg:    wire.Message{ID: "peeked", From: wire.Sender{ID: carol.ID(), Name: "carol"}, Parts: wire.TextParts("hi")},
			Stream: wire.DMStream("s"), Seq: 7,
		}
	}
	e.queueTaken(TakeReply{Items: []TakenItem{taken("k1")}})
	if gaveBack != 1 || e.inbox.size() != 0 {
		t.Fatalf("the first hand-over was not read and given back (%d given back, %d queued)", gaveBack, e.inbox.size())
	}
	e.queueTaken(TakeReply{Items: []TakenItem{taken("k2")}})
	items := e.inbox.take(1)
	if len(items) != 1 || items[0].Msg.ID != "peeked" {
		t.Fatalf("the copy given back and handed over again did not come back: %d items", len(items))
	}

	// A second stored copy of the same id (its backstop copy) while the
	// first is read but not settled: settled as a duplicate, and the
	// first's handle stays on record for its own next hand-over.
	backstop := taken("k3")
	backstop.Stream, backstop.Seq = wire.DlvStream("s"), 3
	e.queueTaken(TakeReply{Items: []TakenItem{backstop}})
	e.remote.mu.Lock()
	h := e.remote.pending["peeked"]
	e.remote.mu.Unlock()
	if h == nil || h.current() != "k2" || e.inbox.size() != 0 {
		t.Fatalf("after a duplicate copy the handle on record is %+v (%d queued), want the read copy's k2", h, e.inbox.size())
	}
	again := taken("k4")
	e.queueTaken(TakeReply{Items: []TakenItem{again}})
	if h.current() != "k4" || e.inbox.size() != 0 {
		t.Fatalf("the read copy handed over again moved its handle to %q (%d queued), want k4 and nothing queued", h.current(), e.inbox.size())
	}
}
