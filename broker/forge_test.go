package broker_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/wire"
)

const space = "forge"

// startBroker starts the production broker on a temp store and a free
// port, provisioned, and stops it when the test ends.
func startBroker(t *testing.T, open bool) *broker.Broker {
	t.Helper()
	b, _ := testmesh.Start(t, space, open)
	return b
}

// client is a TCP connection holding a minted credential, with its
// asynchronous permission errors collected.
type client struct {
	nc   *nats.Conn
	mu   sync.Mutex
	errs []string
}

func (c *client) sawViolation(subject string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.errs {
		if strings.Contains(strings.ToLower(e), "permissions violation") && strings.Contains(e, subject) {
			return nil
		}
	}
	return fmt.Errorf("no permissions violation naming %q yet (errors so far: %v)", subject, c.errs)
}

func mintAndConnect(t *testing.T, b *broker.Broker, id broker.Identity) *client {
	t.Helper()
	id.Space = space
	creds, err := b.Authority().Mint(id)
	if err != nil {
		t.Fatal(err)
	}
	nc0, _ := b.Internal()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := broker.ProvisionIdentity(ctx, nc0, creds.Identity); err != nil {
		t.Fatal(err)
	}
	c := &client{}
	nc, err := nats.Connect(b.URL(),
		nats.UserJWTAndSeed(creds.JWT, string(creds.Seed)),
		nats.CustomInboxPrefix(creds.Identity.InboxPrefix()),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			c.mu.Lock()
			c.errs = append(c.errs, err.Error())
			c.mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c.nc = nc
	return c
}

func alice() broker.Identity {
	return broker.Identity{
		Principal: wire.Principal{Owner: "local", Actor: "alice"},
		Role:      "reviewer",
		Subscribe: []string{"team.backend"}, AllowSubscribe: []string{"team.backend"}, AllowPublish: []string{"team.backend"},
	}
}

func TestForgeLockRefusesPublishingAsAnotherPrincipal(t *testing.T) {
	b := startBroker(t, false)
	c := mintAndConnect(t, b, alice())
	root := wire.Root(space)
	for _, subj := range []string{
		root + ".chat.local.bob.team.backend",              // chat as bob
		root + ".inst.local.carol.local.bob",               // DM as bob
		root + ".svc.reviewer.local.bob",                   // anycast as bob
		root + ".chat.local.alice.team.frontend",           // own chat outside allowPublish
		"$KV." + wire.PresenceBucket(space) + ".local.bob", // bob's presence
		"$JS.API.CONSUMER.CREATE." + wire.DMStream(space),  // no raw JetStream API
	} {
		t.Run(subj, func(t *testing.T) {
			if err := c.nc.Publish(subj, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 5*time.Second, func() error { _ = c.nc.Flush(); return c.sawViolation(subj) })
		})
	}
}

// TestForgeLockAllowsOwnSubjects: an agent's publishes on its own chat,
// inst and svc subjects are stored, and the stored notices reach it on its
// own stored-notice subject.
func TestForgeLockAllowsOwnSubjects(t *testing.T) {
	b := startBroker(t, false)
	c := mintAndConnect(t, b, alice())
	root := wire.Root(space)
	for _, subj := range []string{
		root + ".chat.local.alice.team.backend",
		root + ".inst.local.bob.local.alice",
		root + ".svc.reviewer.local.alice",
	} {
		if seq := testmesh.StoreData(t, c.nc, subj, []byte(`{}`)); seq == 0 {
			t.Errorf("publish on own subject %s: stored at seq 0", subj)
		}
	}
	// Her own DM durable is not hers to bind: an agent has no JetStream
	// API right at all, the delivery service reads for it.
	subj := "$JS.API.CONSUMER.INFO." + wire.DMStream(space) + "." + wire.DMConsumer(alice().Principal, mustUID(t, c))
	if err := c.nc.Publish(subj, nil); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error { _ = c.nc.Flush(); return c.sawViolation(subj) })
}

// mustUID recovers the lifecycle uid from the connection's inbox prefix.
func mustUID(t *testing.T, c *client) string {
	t.Helper()
	inbox := c.nc.NewRespInbox()
	// _INBOX_local-alice-<uid>.<token>
	head, _, _ := strings.Cut(strings.TrimPrefix(inbox, "_INBOX_"), ".")
	parts := strings.Split(head, "-")
	return parts[len(parts)-1]
}

func TestForgeLockRefusesForeignSubscriptions(t *testing.T) {
	b := startBroker(t, false)
	c := mintAndConnect(t, b, alice())
	root := wire.Root(space)
	for _, subj := range []string{
		root + ".inst.local.bob.>",       // bob's DMs
		"_INBOX.>",                       // everybody's replies
		"_INBOX_local-bob-x.>",           // bob's inbox
		root + ".chat.*.*.team.frontend", // outside allowSubscribe
		root + ".chat.>",                 // all chat
		root + ".stored.local.bob.>",     // bob's stored notices
		root + ".stored.>",               // everybody's stored notices
	} {
		t.Run(subj, func(t *testing.T) {
			if _, err := c.nc.SubscribeSync(subj); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 5*time.Second, func() error { _ = c.nc.Flush(); return c.sawViolation(subj) })
		})
	}
}

func TestObserverCannotReadDMs(t *testing.T) {
	b := startBroker(t, false)
	c := mintAndConnect(t, b, broker.Identity{
		Principal: wire.Principal{Owner: "local", Actor: "watcher"}, Profile: wire.ProfileObserver,
	})
	root := wire.Root(space)
	for _, subj := range []string{root + ".inst.>", root + ".inst.local.alice.>"} {
		if _, err := c.nc.SubscribeSync(subj); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 5*time.Second, func() error { _ = c.nc.Flush(); return c.sawViolation(subj) })
	}
	// Nor create a consumer on the DM stream to read them that way.
	info := "$JS.API.CONSUMER.CREATE." + wire.DMStream(space)
	if err := c.nc.Publish(info, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error { _ = c.nc.Flush(); return c.sawViolation(info) })
	// It can read chat.
	sub, err := c.nc.SubscribeSync(root + ".chat.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	op, _ := b.Internal()
	if err := op.Publish(root+".chat.local.alice.general", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("observer did not receive chat: %v (errors: %v)", err, c.errs)
	}
}

func TestOpenModeAcceptsAnonymousAndAuthRefusesIt(t *testing.T) {
	open := startBroker(t, true)
	nc, err := nats.Connect(open.URL())
	if err != nil {
		t.Fatalf("open mode refused an anonymous client: %v", err)
	}
	nc.Close()

	auth := startBroker(t, false)
	nc, err = nats.Connect(auth.URL(), nats.MaxReconnects(0))
	if err == nil {
		nc.Close()
		t.Fatal("auth mode accepted an anonymous client")
	}
	if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("want an authorization error, got %v", err)
	}
}

// A credential with many channel rows outgrows the default 4 KiB CONNECT
// line; the broker must still accept it.
func TestLargeCredentialConnects(t *testing.T) {
	b := startBroker(t, false)
	var chans []string
	for i := range 100 {
		chans = append(chans, fmt.Sprintf("team.area%03d.channel", i))
	}
	c := mintAndConnect(t, b, broker.Identity{
		Principal: wire.Principal{Owner: "local", Actor: "wide"}, Role: "reviewer",
		Subscribe: chans, AllowSubscribe: chans, AllowPublish: chans,
	})
	if err := c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// Control-surface grants: one request row per command an agent may call,
// pinned to its own caller triple.
func TestGrantsPinCallerAndCapability(t *testing.T) {
	b := startBroker(t, false)
	root := wire.Root(space)
	op, _ := b.Internal()
	seen := make(chan string, 16)
	if _, err := op.Subscribe(root+".ep.>", func(m *nats.Msg) { seen <- m.Subject }); err != nil {
		t.Fatal(err)
	}
	_ = op.Flush()
	nonce := "n0123456789abcdefghijklmn"

	plain := mintAndConnect(t, b, broker.Identity{Principal: wire.Principal{Owner: "local", Actor: "plain"}})
	uid := mustUID(t, plain)
	me := "local.plain." + uid
	allowed := []string{
		root + ".ep.one.manager.describe." + me + "." + nonce,
		root + ".ep.inst.manager.iid1.describe." + me + "." + nonce,
		root + ".ep.one.manager.inbox.self." + me + "." + nonce,
		root + ".ep.one.manager.goal-result." + me + "." + nonce,
	}
	for _, subj := range allowed {
		if err := plain.nc.Publish(subj, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-seen:
			if got != subj {
				t.Fatalf("saw %s, want %s", got, subj)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("allowed request %s never arrived (errors %v)", subj, plain.errs)
		}
	}
	refused := []string{
		root + ".ep.one.manager.spawn." + me + "." + nonce,                   // no spawn capability
		root + ".ep.one.manager.input." + me + "." + nonce,                   // operator-only command
		root + ".ep.one.manager.describe.local.other." + uid + "." + nonce,   // another caller
		root + ".ep.one.manager.inbox.self.local.other." + uid + "." + nonce, // another's self command
	}
	for _, subj := range refused {
		if err := plain.nc.Publish(subj, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 5*time.Second, func() error { _ = plain.nc.Flush(); return plain.sawViolation(subj) })
	}
	other := root + ".ep.reply.manager.iid1.1.local.other." + uid + ".*"
	if _, err := plain.nc.SubscribeSync(other); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error { _ = plain.nc.Flush(); return plain.sawViolation(other) })

	spawner := mintAndConnect(t, b, broker.Identity{Principal: wire.Principal{Owner: "local", Actor: "boss"}, Capabilities: []string{broker.CapSpawn}})
	subj := root + ".ep.one.manager.spawn.local.boss." + mustUID(t, spawner) + "." + nonce
	if err := spawner.nc.Publish(subj, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-seen:
		if got != subj {
			t.Fatalf("saw %s, want %s", got, subj)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("spawn with the capability never arrived (errors %v)", spawner.errs)
	}
	if _, err := b.Authority().Mint(broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: "x"}, Capabilities: []string{"admin"}}); err == nil {
		t.Fatal("minted the admin capability")
	}
}
