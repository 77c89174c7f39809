package attach_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/attach"
)

// authMesh is an authenticated broker whose account signing key the test
// holds, so it can mint agent credentials carrying the session rows the
// broker will add (HolderPermissions, ServePermissions).
type authMesh struct {
	t      *testing.T
	b      *broker.Broker
	op     *nats.Conn
	signer nkeys.KeyPair
}

func startAuthMesh(t *testing.T) *authMesh {
	t.Helper()
	paths := config.Paths{Space: space, StoreDir: t.TempDir()}
	b, err := broker.Start(broker.Options{Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	op, err := b.Internal()
	if err != nil {
		t.Fatal(err)
	}
	if err := broker.Provision(testmesh.Ctx(t), op, space, false, 0); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(broker.KeysFile(paths))
	if err != nil {
		t.Fatal(err)
	}
	var keys struct {
		Signer string `json:"signer"`
	}
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatal(err)
	}
	kp, err := nkeys.FromSeed([]byte(keys.Signer))
	if err != nil {
		t.Fatal(err)
	}
	return &authMesh{t: t, b: b, op: op, signer: kp}
}

// client is a TCP connection under a credential, with its permission
// refusals collected.
type client struct {
	nc   *nats.Conn
	mu   sync.Mutex
	errs []string
}

func (c *client) violation(op, subject string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.errs {
		if strings.Contains(strings.ToLower(e), "permissions violation for "+op+" to \""+strings.ToLower(subject)+"\"") {
			return nil
		}
	}
	return fmt.Errorf("no %s violation on %q (refusals so far: %v)", op, subject, c.errs)
}

// connect mints a user with perms, signed by the account signing key.
func (m *authMesh) connect(name string, perms jwt.Permissions, inbox string) *client {
	m.t.Helper()
	ukp, err := nkeys.CreateUser()
	if err != nil {
		m.t.Fatal(err)
	}
	upub, _ := ukp.PublicKey()
	uc := jwt.NewUserClaims(upub)
	uc.Name = name
	uc.IssuerAccount = m.b.Authority().AccountKey()
	uc.Permissions = perms
	ujwt, err := uc.Encode(m.signer)
	if err != nil {
		m.t.Fatal(err)
	}
	seed, _ := ukp.Seed()
	c := &client{}
	opts := []nats.Option{nats.UserJWTAndSeed(ujwt, string(seed)), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		c.mu.Lock()
		c.errs = append(c.errs, err.Error())
		c.mu.Unlock()
	})}
	if inbox != "" {
		opts = append(opts, nats.CustomInboxPrefix(inbox))
	}
	nc, err := nats.Connect(m.b.URL(), opts...)
	if err != nil {
		m.t.Fatalf("connect %s: %v", name, err)
	}
	m.t.Cleanup(nc.Close)
	c.nc = nc
	return c
}

// agent connects an agent-profile identity with its session rows added.
func (m *authMesh) agent(actor string) (*client, attach.Holder) {
	m.t.Helper()
	id := broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: actor}, AllowPublish: []string{}}
	if err := id.Normalize(); err != nil {
		m.t.Fatal(err)
	}
	perms := id.Permissions()
	caller := proto.Caller{Owner: "local", Actor: actor, UID: id.UID}
	pub, sub, err := attach.HolderPermissions(space, caller)
	if err != nil {
		m.t.Fatal(err)
	}
	perms.Pub.Allow.Add(pub...)
	perms.Sub.Allow.Add(sub...)
	return m.connect("local."+actor, perms, id.InboxPrefix()), attach.HolderOf(caller, 0)
}

// A session's subjects are the holder's alone: the broker refuses any
// other agent's subscribe or publish there, and the holder works end to
// end with nothing but the standing rows; the serving side needs nothing
// but its own.
func TestSessionSubjectsBoundToHolderByBroker(t *testing.T) {
	m := startAuthMesh(t)
	const epoch = 3
	var servePerms jwt.Permissions
	pub, sub, err := attach.ServePermissions(space, "manager", epoch)
	if err != nil {
		t.Fatal(err)
	}
	servePerms.Pub.Allow.Add(pub...)
	servePerms.Sub.Allow.Add(sub...)
	serving := m.connect("manager-serve", servePerms, "")

	reg, err := attach.NewRegistry(attach.RegistryOptions{Space: space, Endpoint: "manager", Serving: attach.Serving{InstanceID: ep.NewInstanceID(), Epoch: epoch}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close(attach.ReasonManagerRestart) })
	seat := startSeat(t, 80, 24, "sh")

	alice, aliceH := m.agent("alice")
	mallory, malloryH := m.agent("mallory")
	malloryCaller, err := malloryH.Caller()
	if err != nil {
		t.Fatal(err)
	}
	mm := &mesh{t: t, url: m.b.URL(), server: serving.nc, reg: reg}
	a := mm.attachTo(seat, "shell", aliceH, alice.nc, 80, 24, nil)
	typeKeys(t, a.client, "echo alice-$((6*7))\r")
	a.screen.waitFor(t, "alice-42")

	// Mallory, another agent, knowing alice's session subjects.
	in, out := a.grant.Subjects.In, a.grant.Subjects.Out
	for _, subj := range []string{out, in, "cotal." + space + ".eps.>", "cotal." + space + ".eps.manager.*.*.*.*.*.out", "cotal." + space + ".eps.*.*.*.local.alice.*.*"} {
		if _, err := mallory.nc.SubscribeSync(subj); err != nil {
			t.Fatal(err)
		}
	}
	if err := mallory.nc.Publish(in, []byte(`{"t":"f","seq":5,"data":{"k":"data","b":"`+base64.StdEncoding.EncodeToString([]byte("echo mallory-was-here\r"))+`"}}`)); err != nil {
		t.Fatal(err)
	}
	// Alice's session id under mallory's own triple: the broker lets it
	// through, and nobody serves it.
	own, err := attach.SessionSubjects(space, "manager", a.grant.SessionID, epoch, malloryCaller)
	if err != nil {
		t.Fatal(err)
	}
	if err := mallory.nc.Publish(own.In, []byte(`{"t":"f","seq":5,"data":{"k":"data","b":"`+base64.StdEncoding.EncodeToString([]byte("echo mallory-was-here\r"))+`"}}`)); err != nil {
		t.Fatal(err)
	}
	if err := mallory.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		for _, v := range []struct{ op, subj string }{
			{"subscription", out}, {"subscription", in},
			{"subscription", "cotal." + space + ".eps.>"},
			{"subscription", "cotal." + space + ".eps.manager.*.*.*.*.*.out"},
			{"subscription", "cotal." + space + ".eps.*.*.*.local.alice.*.*"},
			{"publish", in},
		} {
			if err := mallory.violation(v.op, v.subj); err != nil {
				return err
			}
		}
		return nil
	})
	// Neither may the serving credential read or write anything else, nor
	// sessions of another epoch.
	otherEpoch := strings.Replace(out, ".3.local.", ".2.local.", 1)
	if err := serving.nc.Publish(otherEpoch, []byte(`{"t":"close"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := serving.nc.SubscribeSync("cotal." + space + ".chat.>"); err != nil {
		t.Fatal(err)
	}
	if err := serving.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() error {
		if err := serving.violation("publish", otherEpoch); err != nil {
			return err
		}
		return serving.violation("subscription", "cotal."+space+".chat.>")
	})

	// The session is untouched: alice still types, and mallory's bytes
	// never reached the seat.
	typeKeys(t, a.client, "echo still-$((6*6))\r")
	a.screen.waitFor(t, "still-36")
	if strings.Contains(seat.Screen(), "mallory-was-here") {
		t.Fatalf("mallory typed into alice's seat:\n%s", seat.Screen())
	}
	if err := mallory.violation("publish", own.In); err == nil {
		t.Fatal("the broker refused mallory's own session subject")
	}
	alice.mu.Lock()
	defer alice.mu.Unlock()
	if len(alice.errs) > 0 {
		t.Fatalf("the holder was refused: %v", alice.errs)
	}
}

// A reply is the requester's to aim, and JetStream answers from inside the
// account with the stored headers: a frame replayed that way (agents hold
// no JetStream right now, but the broker's own answers can still be aimed)
// arrives with headers, and the server drops it, since a holder never
// sends headers.
func TestBrokerAuthoredFrameDropped(t *testing.T) {
	m := startAuthMesh(t)
	reg, err := attach.NewRegistry(attach.RegistryOptions{Space: space, Endpoint: "manager", Serving: attach.Serving{InstanceID: ep.NewInstanceID(), Epoch: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close(attach.ReasonManagerRestart) })
	seat := startSeat(t, 80, 24, "sh")
	alice, aliceH := m.agent("alice")
	mm := &mesh{t: t, url: m.b.URL(), server: m.op, reg: reg}
	a := mm.attachTo(seat, "shell", aliceH, alice.nc, 80, 24, nil)
	a.screen.waitFor(t, "$")
	tap := testmesh.NewTap(t, m.op, a.grant.Subjects.In)

	next := a.client.Stats().Rail.Sent + 1
	forged := fmt.Sprintf(`{"t":"f","seq":%d,"data":{"k":"data","b":"%s"}}`, next, base64.StdEncoding.EncodeToString([]byte("echo forged-$((1+1))\r")))
	replayed := nats.NewMsg(a.grant.Subjects.In)
	replayed.Data = []byte(forged)
	replayed.Header.Set("Nats-Stream", "KV_"+wire.PresenceBucket(space))
	replayed.Header.Set("Nats-Sequence", "1")
	testutil.WaitFor(t, 5*time.Second, func() error {
		if err := m.op.PublishMsg(replayed); err != nil {
			return err
		}
		for _, msg := range tap.All() {
			if string(msg.Data) == forged && len(msg.Header) > 0 {
				return nil
			}
		}
		return fmt.Errorf("the forged frame has not reached the session subject")
	})
	testutil.WaitFor(t, 5*time.Second, func() error {
		if st := a.server.Stats(); !st.Live {
			return fmt.Errorf("the session ended: %+v", st)
		}
		return nil
	})
	typeKeys(t, a.client, "echo real-$((2+2))\r")
	a.screen.waitFor(t, "real-4")
	if strings.Contains(seat.Screen(), "forged-2") {
		t.Fatalf("the broker-authored frame was typed into the seat:\n%s", seat.Screen())
	}
}

// TestBrokerGrantsHolderRows: a spawn-capable agent's credential carries
// exactly the holder rows this package names for it, and an agent without
// the capability none.
func TestBrokerGrantsHolderRows(t *testing.T) {
	for _, caps := range [][]string{{broker.CapSpawn}, nil} {
		id := broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: "alice"}, UID: wire.NewLifecycleUID(), Capabilities: caps, AllowPublish: []string{}}
		if err := id.Normalize(); err != nil {
			t.Fatal(err)
		}
		perms := id.Permissions()
		pub, sub, err := attach.HolderPermissions(space, proto.Caller{Owner: "local", Actor: "alice", UID: id.UID})
		if err != nil {
			t.Fatal(err)
		}
		has := func(list []string, row string) bool { return slices.Contains(list, row) }
		want := len(caps) > 0
		if has(perms.Pub.Allow, pub[0]) != want || has(perms.Sub.Allow, sub[0]) != want {
			t.Fatalf("capabilities %v: holder rows %v %v in the credential = %v %v, want %v", caps, pub, sub,
				has(perms.Pub.Allow, pub[0]), has(perms.Sub.Allow, sub[0]), want)
		}
	}
}
