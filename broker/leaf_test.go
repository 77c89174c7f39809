package broker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/wire"
)

const leafSpace = "pair"

// side is one end of a leaf pair: its broker and operator connection.
type side struct {
	b  *broker.Broker
	op *nats.Conn
	js jetstream.JetStream
}

// leafPair starts a hub and a leaf of one space, the leaf dialling the
// hub through a link the test can cut, both linked for stream sourcing.
func leafPair(t *testing.T, open bool) (hub, leaf side, link *testutil.Link) {
	t.Helper()
	hb, hop := testmesh.StartWith(t, leafSpace, broker.Options{Open: open,
		Leaf: broker.Leaf{Domain: "hub", Listen: "127.0.0.1:0", Peers: []string{"lap"}}})
	link = testutil.NewLink(t, hb.LeafAddr())
	creds := ""
	if !open {
		creds = linkCreds(t, hb, "lap", "hub")
	}
	lb, lop := testmesh.StartWith(t, leafSpace, broker.Options{Open: open,
		Leaf: broker.Leaf{Domain: "lap", Remote: "nats://" + link.Addr(), Creds: creds, Peers: []string{"hub"}}})
	for _, s := range []struct {
		b  *broker.Broker
		nc *nats.Conn
	}{{hb, hop}, {lb, lop}} {
		if err := broker.LinkStreams(testmesh.Ctx(t), s.nc, leafSpace, s.b.MaxStore(), s.b.Options().Leaf.Domain, s.b.Options().Leaf.Peers); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.b.FollowLeafLinks(ctx, s.nc, leafSpace, t.Logf)
		}()
		t.Cleanup(func() { cancel(); <-done })
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		if hb.LeafLinks() != 1 || lb.LeafLinks() != 1 {
			return fmt.Errorf("leaf links: hub %d, leaf %d", hb.LeafLinks(), lb.LeafLinks())
		}
		return nil
	})
	hjs, _ := jetstream.New(hop)
	ljs, _ := jetstream.New(lop)
	return side{hb, hop, hjs}, side{lb, lop, ljs}, link
}

// publish stores one message as the space's streams take it: on its
// subject with its id as Nats-Msg-Id.
func publish(t *testing.T, nc *nats.Conn, subject, id string) {
	t.Helper()
	m := nats.NewMsg(subject)
	m.Header.Set(nats.MsgIdHdr, id)
	m.Data = []byte(`{"id":"` + id + `"}`)
	if err := nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
}

// ids lists the Nats-Msg-Id of every message in stream on subject, in
// stream order.
func ids(ctx context.Context, js jetstream.JetStream, stream, subject string) ([]string, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	var out []string
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		if m.Subject == subject || subject == "" {
			out = append(out, m.Header.Get(nats.MsgIdHdr))
		}
	}
	return out, nil
}

// holds waits until stream holds exactly want (ids, in any order) on
// subject, each once.
func holds(t *testing.T, s side, stream, subject string, want ...string) {
	t.Helper()
	testutil.WaitFor(t, 15*time.Second, func() error {
		got, err := ids(testmesh.Ctx(t), s.js, stream, subject)
		if err != nil {
			return err
		}
		count := map[string]int{}
		for _, id := range got {
			count[id]++
		}
		if len(got) != len(want) {
			return fmt.Errorf("%s holds %v, want %v", stream, got, want)
		}
		for _, id := range want {
			if count[id] != 1 {
				return fmt.Errorf("%s holds %v, want %v each once", stream, got, want)
			}
		}
		return nil
	})
}

func TestLeafPairCarriesDMsAndPostsBothWays(t *testing.T) {
	hub, leaf, _ := leafPair(t, true)
	alice := wire.Principal{Owner: "local", Actor: "alice"}
	bob := wire.Principal{Owner: "local", Actor: "bob"}
	toBob := wire.DMSubject(leafSpace, bob, alice)
	toAlice := wire.DMSubject(leafSpace, alice, bob)
	publish(t, hub.op, toBob, "dm-from-hub")
	publish(t, leaf.op, toAlice, "dm-from-leaf")
	for _, s := range []side{hub, leaf} {
		holds(t, s, wire.DMStream(leafSpace), toBob, "dm-from-hub")
		holds(t, s, wire.DMStream(leafSpace), toAlice, "dm-from-leaf")
	}
}

func TestLeafPairCarriesDurablePostsBothWays(t *testing.T) {
	hub, leaf, _ := leafPair(t, true)
	alice := wire.Principal{Owner: "local", Actor: "alice"}
	bob := wire.Principal{Owner: "local", Actor: "bob"}
	fromAlice, _ := wire.ChatSubject(leafSpace, alice, "team")
	fromBob, _ := wire.ChatSubject(leafSpace, bob, "team")
	publish(t, hub.op, fromAlice, "post-from-hub")
	publish(t, leaf.op, fromBob, "post-from-leaf")
	for _, s := range []side{hub, leaf} {
		holds(t, s, wire.ChatStream(leafSpace), fromAlice, "post-from-hub")
		holds(t, s, wire.ChatStream(leafSpace), fromBob, "post-from-leaf")
	}
}

// The link cut, each side keeps storing its own DMs; restored, what each
// stored meanwhile reaches the other exactly once.
func TestLeafPairDeliversWhatWasSentWhileCut(t *testing.T) {
	hub, leaf, link := leafPair(t, true)
	alice := wire.Principal{Owner: "local", Actor: "alice"}
	bob := wire.Principal{Owner: "local", Actor: "bob"}
	toBob := wire.DMSubject(leafSpace, bob, alice)
	toAlice := wire.DMSubject(leafSpace, alice, bob)
	publish(t, hub.op, toBob, "before")
	holds(t, leaf, wire.DMStream(leafSpace), toBob, "before")

	link.Cut()
	testutil.WaitFor(t, 10*time.Second, func() error {
		if n := hub.b.LeafLinks() + leaf.b.LeafLinks(); n != 0 {
			return fmt.Errorf("%d leaf connections still up", n)
		}
		return nil
	})
	publish(t, hub.op, toBob, "cut-hub")
	publish(t, leaf.op, toAlice, "cut-leaf")
	// Each side alone still stores what its own side sends.
	holds(t, hub, wire.DMStream(leafSpace), toBob, "before", "cut-hub")
	holds(t, leaf, wire.DMStream(leafSpace), toAlice, "cut-leaf")

	link.Restore()
	for _, s := range []side{hub, leaf} {
		holds(t, s, wire.DMStream(leafSpace), toBob, "before", "cut-hub")
		holds(t, s, wire.DMStream(leafSpace), toAlice, "cut-leaf")
	}
}
