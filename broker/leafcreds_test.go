package broker_test

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/wire"
)

// linkCreds mints hub's link credential for the leaf domain and writes it
// to a 0600 file.
func linkCreds(t *testing.T, hub *broker.Broker, leaf, hubDomain string) string {
	t.Helper()
	c, err := hub.Authority().MintLink(leaf, hubDomain)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), leaf+".creds")
	if err := broker.WriteCreds(path, c); err != nil {
		t.Fatal(err)
	}
	return path
}

// Both sides authenticated, each with its own keys: the leaf dials with the
// hub's link credential and DMs and posts cross both ways.
func TestAuthLeafPairCarriesDMsAndPosts(t *testing.T) {
	hub, leaf, _ := leafPair(t, false)
	alice := wire.Principal{Owner: "local", Actor: "alice"}
	bob := wire.Principal{Owner: "local", Actor: "bob"}
	toBob := wire.DMSubject(leafSpace, bob, alice)
	fromBob, _ := wire.ChatSubject(leafSpace, bob, "team")
	publish(t, hub.op, toBob, "dm-from-hub")
	publish(t, leaf.op, fromBob, "post-from-leaf")
	for _, s := range []side{hub, leaf} {
		holds(t, s, wire.DMStream(leafSpace), toBob, "dm-from-hub")
		holds(t, s, wire.ChatStream(leafSpace), fromBob, "post-from-leaf")
	}
}

func TestReadLinkCreds(t *testing.T) {
	hb, _ := testmesh.StartWith(t, leafSpace, broker.Options{})
	got, err := broker.ReadLinkCreds(linkCreds(t, hb, "lap", "hub"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (broker.LinkTags{Space: leafSpace, Leaf: "lap", Hub: "hub"}); got != want {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	for _, bad := range [][2]string{{"hub", "hub"}, {"Lap", "hub"}, {"la.p", "hub"}} {
		if _, err := hb.Authority().MintLink(bad[0], bad[1]); err == nil {
			t.Errorf("MintLink(%q, %q) minted", bad[0], bad[1])
		}
	}
	agent := testmesh.Mint
	path, _ := agent(t, hb, broker.Identity{Principal: wire.Principal{Owner: "local", Actor: "bob"}, Profile: wire.ProfileAgent})
	if _, err := broker.ReadLinkCreds(path); err == nil {
		t.Fatal("an agent's creds read as a link credential")
	}
}

// The link credential grants the link and nothing else. Held by an
// attacker, it does not connect as a client, and a leaf of the attacker's
// own (no deny lists) carries none of the space's subjects, no JetStream
// API request and no bucket either way.
func TestLinkCredsGrantOnlyTheLink(t *testing.T) {
	hb, hop := testmesh.StartWith(t, leafSpace, broker.Options{
		Leaf: broker.Leaf{Domain: "hub", Listen: "127.0.0.1:0", Peers: []string{"lap"}}})
	if err := broker.LinkStreams(testmesh.Ctx(t), hop, leafSpace, hb.MaxStore(), "hub", []string{"lap"}); err != nil {
		t.Fatal(err)
	}
	creds := linkCreds(t, hb, "lap", "hub")

	if nc, err := nats.Connect(hb.URL(), nats.UserCredentials(creds), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("the link credential connected as a client")
	}

	// The hub's side: everything a leaf could reach, and a marker the
	// link may carry, published last.
	var mu sync.Mutex
	var atHub []string
	for _, subj := range []string{"cotal.>", "$KV.>", "$JS.API.>", "$JS.hub.API.>", "$JS.FC.marker"} {
		sub, err := hop.Subscribe(subj, func(m *nats.Msg) {
			if strings.HasPrefix(m.Subject, "$JS.API.") && !strings.Contains(m.Subject, "attack") {
				return // the hub's own JetStream traffic
			}
			mu.Lock()
			atHub = append(atHub, m.Subject)
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
	}
	if err := hop.Flush(); err != nil {
		t.Fatal(err)
	}

	evil := attackerLeaf(t, hb.LeafAddr(), creds)
	var atEvil []string
	var emu sync.Mutex
	// One subscription to everything, so what it hears keeps its order.
	if _, err := evil.Subscribe(">", func(m *nats.Msg) {
		emu.Lock()
		atEvil = append(atEvil, m.Subject)
		emu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := evil.Flush(); err != nil {
		t.Fatal(err)
	}

	alice := wire.Principal{Owner: "local", Actor: "alice"}
	bob := wire.Principal{Owner: "local", Actor: "bob"}
	post, _ := wire.ChatSubject(leafSpace, alice, "team")
	origin := broker.OriginStream(wire.DMStream(leafSpace))
	forbidden := []string{
		post, wire.DMSubject(leafSpace, bob, alice),
		"$KV." + wire.RecordsBucket(leafSpace) + ".attack", "$KV." + wire.ACLBucket(leafSpace) + ".attack",
		"$JS.API.STREAM.DELETE." + wire.DMStream(leafSpace) + ".attack",
		"$JS.hub.API.STREAM.DELETE." + wire.DMStream(leafSpace),
		"$JS.hub.API.STREAM.LIST", "$JS.hub.API.DIRECT.GET." + wire.DMStream(leafSpace),
		// A consumer of the attacker's making would deliver the hub's
		// origin wherever its configuration says, a bucket's subject too.
		"$JS.hub.API.CONSUMER.CREATE." + origin, "$JS.hub.API.CONSUMER.CREATE." + origin + ".evil.>",
		"$JS.hub.API.CONSUMER.RESET." + origin + "." + broker.LinkConsumer("hub"),
	}
	// Posting as others, writing the registry, the JetStream API: refused.
	for _, subj := range forbidden {
		m := nats.NewMsg(subj)
		m.Header.Set(nats.MsgIdHdr, "attack-"+subj)
		m.Reply = "_INBOX.attack"
		if strings.Contains(subj, ".CONSUMER.") {
			m.Reply = "$JSC.R.attack" // a reply subject the link carries
			m.Data = []byte(`{"stream_name":"` + origin + `","config":{"deliver_subject":"$KV.` + wire.RecordsBucket(leafSpace) + `.evil","ack_policy":"none"}}`)
		}
		if err := evil.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := evil.Publish("$JS.FC.marker", nil); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(atHub) == 0 || atHub[len(atHub)-1] != "$JS.FC.marker" {
			return fmt.Errorf("the marker has not crossed; the hub heard %v", atHub)
		}
		return nil
	})
	mu.Lock()
	if len(atHub) != 1 {
		t.Errorf("the hub heard the attacker's leaf on %v", atHub)
	}
	mu.Unlock()
	js, _ := jetstream.New(hop)
	if _, err := js.Stream(testmesh.Ctx(t), wire.DMStream(leafSpace)); err != nil {
		t.Errorf("the DM stream after the attack: %v", err)
	}
	o, err := js.Stream(testmesh.Ctx(t), origin)
	if err != nil {
		t.Fatal(err)
	}
	var consumers []string
	for name := range o.ConsumerNames(testmesh.Ctx(t)).Name() {
		consumers = append(consumers, name)
	}
	if len(consumers) != 1 || consumers[0] != broker.LinkConsumer("lap") {
		t.Errorf("%s has consumers %v after the attack, want only %s", origin, consumers, broker.LinkConsumer("lap"))
	}

	// The attacker's own subscriptions heard its publishes on its own
	// server; once its marker is in, start over.
	testutil.WaitFor(t, 10*time.Second, func() error {
		emu.Lock()
		defer emu.Unlock()
		if len(atEvil) == 0 || atEvil[len(atEvil)-1] != "$JS.FC.marker" {
			return errors.New("the attacker has not heard its own marker")
		}
		atEvil = nil
		return nil
	})

	// Reading the space's posts and DMs, the registry, others' replies:
	// none reach the attacker; the marker the link carries does.
	for _, subj := range forbidden[:4] {
		if err := hop.Publish(subj, []byte("secret")); err != nil {
			t.Fatal(err)
		}
	}
	if err := hop.Publish("_INBOX.someone", []byte("secret")); err != nil {
		t.Fatal(err)
	}
	if err := hop.Publish("$JS.S.LINK.hub.lap.marker", nil); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		emu.Lock()
		defer emu.Unlock()
		if len(atEvil) == 0 || atEvil[len(atEvil)-1] != "$JS.S.LINK.hub.lap.marker" {
			return fmt.Errorf("the marker has not crossed; the attacker heard %v", atEvil)
		}
		return nil
	})
	emu.Lock()
	defer emu.Unlock()
	if len(atEvil) != 1 {
		t.Errorf("the attacker's leaf heard %v", atEvil)
	}
}

// attackerLeaf is a bare nats-server of the attacker's, its global account
// joined to the hub with creds and nothing denied, and a client on it.
func attackerLeaf(t *testing.T, hubLeaf, creds string) *nats.Conn {
	t.Helper()
	u, _ := url.Parse("nats://" + hubLeaf)
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true,
		LeafNode: server.LeafNodeOpts{ReconnectInterval: 100 * time.Millisecond,
			Remotes: []*server.RemoteLeafOpts{{URLs: []*url.URL{u}, Credentials: creds}}}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the attacker's server did not start")
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		if srv.NumLeafNodes() != 1 {
			return errors.New("the attacker's leaf has not joined the hub")
		}
		return nil
	})
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// A creds file that is not one is said so.
func TestReadLinkCredsRefusesNonCreds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.creds")
	if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := broker.ReadLinkCreds(path); err == nil {
		t.Fatal("read garbage as a link credential")
	}
}
