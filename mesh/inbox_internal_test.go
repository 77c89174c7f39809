package mesh

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// A stored copy the full inbox pushes out again and again is acked after
// MaxEvictions and reported in a notice, never dropped silently. The
// broker's redeliveries are played by re-adding the real delivery, so the
// test need not wait out five ack waits.
func TestInboxDiscardsACopyEvictedFiveTimesWithANotice(t *testing.T) {
	const sp = "inb"
	_, op := testmesh.Start(t, sp, false)
	js, err := jetstream.New(op)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testmesh.Ctx(t)
	to, from := wire.Principal{Owner: "local", Actor: "alice"}, wire.Principal{Owner: "local", Actor: "carol"}
	subj := wire.DMSubject(sp, to, from)
	body := `{"id":"x","ts":1,"space":"inb","from":{"id":"local.carol","name":"carol"},"to":"local.alice","parts":[{"kind":"text","text":"kept?"}]}`
	testmesh.StoreData(t, op, subj, []byte(body))
	cons, err := js.CreateConsumer(ctx, wire.DMStream(sp), jetstream.ConsumerConfig{
		Durable: "t", FilterSubject: subj, AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(1)
	if err != nil {
		t.Fatal(err)
	}
	m := <-batch.Messages()
	if m == nil {
		t.Fatalf("no stored DM fetched: %v", batch.Error())
	}
	d, reject, _ := wire.Decode(m.Subject(), m.Data())
	meta, err := m.Metadata()
	if reject != "" || err != nil {
		t.Fatalf("decoding the stored DM: %s %v", reject, err)
	}
	stored := func() *Item {
		return &Item{Kind: d.Subject.Kind, Msg: d.Msg, Subject: d.Subject, Durable: true, msg: m, Seq: meta.Sequence.Stream, stream: meta.Stream}
	}
	n := 0
	live := func() *Item {
		n++
		return &Item{Kind: wire.KindChannel, Msg: wire.Message{ID: fmt.Sprintf("l%d", n)}, Subject: wire.Subject{Kind: wire.KindChannel, Channel: "team", Sender: from}}
	}
	pending := func(b *inbox) bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.pending["x"] != nil
	}

	b := newInbox()
	b.add(stored())
	for round := 1; round <= MaxEvictions; round++ {
		for pending(b) {
			b.add(live())
		}
		if b.discarded == 0 {
			b.add(stored()) // the broker hands it out again
		}
		if got := b.discarded; (round < MaxEvictions) != (got == 0) {
			t.Fatalf("after %d evictions %d discarded", round, got)
		}
	}
	items := b.take(1)
	if len(items) != 1 || items[0].Kind != wire.KindDM || items[0].Msg.From.ID != NoticeSender.ID() {
		t.Fatalf("first item after the discard: %+v; want the notice", items)
	}
	if text := items[0].Msg.Text(); !strings.Contains(text, "1 stored message(s) were dropped") || !strings.Contains(text, "a DM from carol") {
		t.Fatalf("notice %q does not say what was dropped", text)
	}
	info, err := cons.Info(ctx)
	if err != nil || info.NumAckPending != 0 || info.AckFloor.Stream != meta.Sequence.Stream {
		t.Fatalf("the discarded copy is not acked: %+v %v", info, err)
	}
}
