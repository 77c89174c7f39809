package host_test

// Attacks on the mesh by a compromised agent: everything an agent credential
// might try over raw nats.go, directly and through JetStream answering on a
// reply subject the agent chose. Each attempt is refused by the broker or
// has no effect: stream contents unchanged, no forged post in history, no
// command typed into a seat, no widened read.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
)

const attackSpace = "attack"

// attacker is an agent's raw connection with its permission violations
// collected.
type attacker struct {
	nc   *nats.Conn
	id   broker.Identity
	mu   sync.Mutex
	errs []string
}

func connectAttacker(t *testing.T, url, creds string, id broker.Identity) *attacker {
	t.Helper()
	a := &attacker{id: id}
	nc, err := nats.Connect(url, nats.UserCredentials(creds), nats.CustomInboxPrefix(id.InboxPrefix()), nats.MaxReconnects(0),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			a.mu.Lock()
			a.errs = append(a.errs, err.Error())
			a.mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	a.nc = nc
	return a
}

// refused waits for the broker to name subject in a permissions violation.
func (a *attacker) refused(t *testing.T, subject string) {
	t.Helper()
	testutil.WaitFor(t, 5*time.Second, func() error {
		_ = a.nc.Flush()
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, e := range a.errs {
			if strings.Contains(strings.ToLower(e), "permissions violation") && strings.Contains(e, subject) {
				return nil
			}
		}
		return fmt.Errorf("no permissions violation for %q (so far: %v)", subject, a.errs)
	})
}

// request publishes data on subject with a chosen reply subject.
func (a *attacker) publish(t *testing.T, subject, reply string, data []byte) {
	t.Helper()
	if err := a.nc.PublishMsg(&nats.Msg{Subject: subject, Reply: reply, Data: data}); err != nil {
		t.Fatal(err)
	}
	if err := a.nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// range is what the attacks may not change.
type world struct {
	chat, dm uint64 // stream message counts
	aclRev   uint64
	consumer []string // DM consumers
}

func TestAttacksByAnAgentCredential(t *testing.T) {
	store := t.TempDir()
	p := config.Paths{Space: attackSpace, StoreDir: store}
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, ".cotal", "agents"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".cotal", "agents", "shell.md"), []byte("---\nname: shell\nagent: command\ncommand: sh\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := host.Start(context.Background(), host.Config{Paths: p, ProjectDir: project, Readiness: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	op := cliConn(t, m, p)
	root := wire.Root(attackSpace)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	reg, err := mesh.OpenRegistry(ctx, mustJS(t, m), attackSpace)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Set(ctx, "secret", mesh.ChannelConfig{DeliveryClass: mesh.ClassDurable}); err != nil {
		t.Fatal(err)
	}
	alicePath, alice := mintTo(t, p, broker.Identity{Space: attackSpace, Principal: wire.Principal{Owner: "local", Actor: "alice"},
		Role: "reviewer", Subscribe: []string{"team.backend"}, AllowSubscribe: []string{"team.backend"}, AllowPublish: []string{"team.>"}}, op)
	bobPath, _ := mintTo(t, p, broker.Identity{Space: attackSpace, Principal: wire.Principal{Owner: "local", Actor: "bob"},
		Subscribe: []string{"team.backend", "secret"}, AllowSubscribe: []string{"team.backend", "secret"}, AllowPublish: []string{"team.>", "secret"}}, op)
	bob, err := mesh.Connect(ctx, mesh.Options{URL: m.Broker().URL(), Creds: bobPath, OneShot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	if _, err := bob.Send(ctx, "secret", "bob's secret"); err != nil {
		t.Fatal(err)
	}

	// A seat to type into, spawned by the operator.
	opID, err := broker.ReadCredsIdentity(p.OperatorCreds())
	if err != nil {
		t.Fatal(err)
	}
	opc, err := ep.NewClient(op, ep.ClientOptions{Space: attackSpace, Caller: proto.Caller{Owner: opID.Principal.Owner, Actor: opID.Principal.Actor, UID: opID.UID}, SharedConn: true})
	if err != nil {
		t.Fatal(err)
	}
	iid := m.Manager().InstanceID()
	r, err := opc.Call(ctx, wire.ManagerEndpoint, "spawn", client.SpawnArgs{Persona: "shell"}, ep.On(iid))
	if err != nil {
		t.Fatal(err)
	}
	var acc client.SpawnAccepted
	_ = json.Unmarshal(r.Data, &acc)
	testutil.WaitFor(t, 15*time.Second, func() error {
		res, err := opc.Call(ctx, wire.ManagerEndpoint, "inspect", map[string]string{"name": acc.Name}, ep.On(iid))
		if err != nil {
			return err
		}
		var row client.Row
		_ = json.Unmarshal(res.Data, &row)
		if row.State != seat.StateReady {
			return fmt.Errorf("seat %s", row.State)
		}
		return nil
	})

	js := mustJS(t, m)
	snapshot := func() world {
		var w world
		for _, s := range []struct {
			name string
			dst  *uint64
		}{{wire.ChatStream(attackSpace), &w.chat}, {wire.DMStream(attackSpace), &w.dm}} {
			st, err := js.Stream(ctx, s.name)
			if err != nil {
				t.Fatal(err)
			}
			*s.dst = st.CachedInfo().State.Msgs
		}
		ent, err := kvOf(t, m, wire.ACLBucket(attackSpace)).Get(ctx, wire.ACLKey(alice.Principal, alice.UID))
		if err != nil {
			t.Fatal(err)
		}
		w.aclRev = ent.Revision()
		dm, _ := js.Stream(ctx, wire.DMStream(attackSpace))
		for name := range dm.ConsumerNames(ctx).Name() {
			w.consumer = append(w.consumer, name)
		}
		return w
	}
	before := snapshot()
	a := connectAttacker(t, m.Broker().URL(), alicePath, alice)
	caller := alice.Principal.Owner + "." + alice.Principal.Actor + "." + alice.UID
	dmConsumer := wire.DMConsumer(alice.Principal, alice.UID)
	inputSubject := root + ".ep.one.manager.input.local.ghost." + wire.NewLifecycleUID() + "." + proto.NewNonce()
	forgedPost, _ := json.Marshal(wire.Message{ID: "forged", TS: time.Now().UnixMilli(), Space: attackSpace,
		From: wire.Sender{ID: "local.bob", Name: "bob"}, Channel: "team.backend", Parts: wire.TextParts("forged by alice")})

	// Direct attempts: each publish or subscribe is a permissions violation.
	for _, c := range []struct{ name, subject, reply, body string }{
		{"post as bob", root + ".chat.local.bob.team.backend", "", string(forgedPost)},
		{"DM as bob", root + ".inst.local.carol.local.alice.local.bob", "", "{}"},
		{"anycast as bob", root + ".svc.reviewer.local.bob", "", "{}"},
		{"post outside allowPublish", root + ".chat.local.alice.secret", "", "{}"},
		{"own presence key", "$KV." + wire.PresenceBucket(attackSpace) + ".local.alice", "", "{}"},
		{"own ACL row", "$KV." + wire.ACLBucket(attackSpace) + "." + wire.ACLKey(alice.Principal, alice.UID), "", `{"allowSubscribe":[">"]}`},
		{"identity record", "$KV." + wire.RecordsBucket(attackSpace) + "." + wire.IdentityKey(alice.Principal), "", "{}"},
		{"direct get on presence, replayed as bob", "$JS.API.DIRECT.GET.KV_" + wire.PresenceBucket(attackSpace), root + ".chat.local.bob.team.backend", `{"last_by_subj":"$KV.` + wire.PresenceBucket(attackSpace) + `.local.alice"}`},
		{"direct get replayed onto a manager rail", "$JS.API.DIRECT.GET.KV_" + wire.PresenceBucket(attackSpace), inputSubject, `{"last_by_subj":"x"}`},
		{"msg get on the contract stream", "$JS.API.STREAM.MSG.GET." + wire.EPCStream(attackSpace), root + ".chat.local.bob.team.backend", `{"seq":1}`},
		{"purge CHAT", "$JS.API.STREAM.PURGE." + wire.ChatStream(attackSpace), "", ""},
		{"purge DM", "$JS.API.STREAM.PURGE." + wire.DMStream(attackSpace), "", ""},
		{"next from own DM durable", "$JS.API.CONSUMER.MSG.NEXT." + wire.DMStream(attackSpace) + "." + dmConsumer, root + ".chat.local.bob.team.backend", `{"batch":1}`},
		{"own DM durable info", "$JS.API.CONSUMER.INFO." + wire.DMStream(attackSpace) + "." + dmConsumer, "", ""},
		{"delete own DM durable", "$JS.API.CONSUMER.DELETE." + wire.DMStream(attackSpace) + "." + dmConsumer, "", ""},
		{"create a spy consumer", "$JS.API.CONSUMER.CREATE." + wire.DMStream(attackSpace) + ".spy", "", `{"stream_name":"` + wire.DMStream(attackSpace) + `","config":{"name":"spy","filter_subject":"` + root + `.inst.local.bob.>"}}`},
		{"stream list", "$JS.API.STREAM.LIST", "", ""},
		{"input as ghost", inputSubject, "", "{}"},
		{"input as herself", root + ".ep.one.manager.input." + caller + "." + proto.NewNonce(), "", "{}"},
		{"ps as herself", root + ".ep.one.manager.ps." + caller + "." + proto.NewNonce(), "", "{}"},
		{"bob's delivery inbox", root + ".ep.one.delivery.take.self.local.bob." + wire.NewLifecycleUID() + "." + proto.NewNonce(), "", "{}"},
		{"old ctl.delivery rail", root + ".ctl.delivery.local.alice", "", "{}"},
		{"a forged receipt to bob", root + ".rcpt.local.bob.some-id", "", `{"id":"some-id","to":"local.carol","rung":"acked"}`},
		{"a receipt of her own", root + ".rcpt.local.alice.some-id", "", `{"id":"some-id","to":"local.carol","rung":"acked"}`},
	} {
		t.Run("publish/"+c.name, func(t *testing.T) {
			a.publish(t, c.subject, c.reply, []byte(c.body))
			a.refused(t, c.subject)
		})
	}
	for _, c := range []struct{ name, subject string }{
		{"everything", ">"},
		{"every inbox", "_INBOX.>"},
		{"bob's inbox", "_INBOX_local-bob-x.>"},
		{"bob's DMs", root + ".inst.local.bob.>"},
		{"channel outside the read ACL", root + ".chat.*.*.secret"},
		{"bob's reply rail", root + ".ep.reply.*.*.*.local.bob.*.*"},
		{"the manager's rails", root + ".ep.one.manager.>"},
		{"JetStream acks", "$JS.ACK.>"},
		{"bob's receipts", root + ".rcpt.local.bob.*"},
		{"every receipt", root + ".rcpt.>"},
	} {
		t.Run("subscribe/"+c.name, func(t *testing.T) {
			if _, err := a.nc.SubscribeSync(c.subject); err != nil {
				t.Fatal(err)
			}
			a.refused(t, c.subject)
		})
	}

	// A PubAck would be an answer an agent could aim anywhere: publish to
	// its own subject with a reply subject of its choice. The streams an
	// agent publishes to answer nothing, so all five posts are stored and
	// no answer lands on any of the subjects named.
	replies := []string{
		root + ".chat.local.bob.team.backend",
		root + ".inst.local.carol.local.bob",
		inputSubject,
		"$JS.API.STREAM.PURGE." + wire.ChatStream(attackSpace),
		"$JS.API.CONSUMER.CREATE." + wire.DMStream(attackSpace) + ".spy2",
	}
	for _, reply := range replies {
		a.publish(t, root+".chat.local.alice.team.backend", reply, forgedPost)
	}

	// Then the effects: none but alice's own five posts.
	var after world
	testutil.WaitFor(t, 5*time.Second, func() error {
		after = snapshot()
		if after.chat != before.chat+uint64(len(replies)) {
			return fmt.Errorf("CHAT stream went from %d to %d messages, want alice's %d posts", before.chat, after.chat, len(replies))
		}
		return nil
	})
	if after.dm != before.dm {
		t.Errorf("DM stream went from %d to %d messages: a PubAck was stored on carol's DM subject", before.dm, after.dm)
	}
	if after.aclRev != before.aclRev {
		t.Errorf("alice's ACL row was rewritten (revision %d -> %d)", before.aclRev, after.aclRev)
	}
	if strings.Join(after.consumer, ",") != strings.Join(before.consumer, ",") {
		t.Errorf("DM consumers changed: %v -> %v", before.consumer, after.consumer)
	}
	hist, _, err := bob.History(ctx, "team.backend", 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hist {
		if h.Msg.From.ID == "local.bob" {
			t.Errorf("a post from bob that bob never made: %+v", h.Msg)
		}
	}
	res, err := opc.Call(ctx, wire.ManagerEndpoint, "screen", map[string]string{"name": acc.Name}, ep.On(iid))
	if err != nil {
		t.Fatal(err)
	}
	var scr client.ScreenReply
	_ = json.Unmarshal(res.Data, &scr)
	if strings.Contains(scr.Screen, "PWNED") || strings.Contains(scr.Screen, "stream") {
		t.Errorf("something was typed into the seat:\n%s", scr.Screen)
	}
	// Alice's read stays hers: history of a channel outside her ACL is refused.
	ae, err := mesh.Connect(ctx, mesh.Options{URL: m.Broker().URL(), Creds: alicePath, OneShot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ae.Close()
	if items, _, err := ae.History(ctx, "secret", 10); err == nil {
		t.Errorf("alice read #secret: %v", items)
	}
	// Her inbox has nothing from bob: no forged DM, no PubAck surfaced.
	items, err := ae.Collect(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		t.Errorf("alice's inbox holds %s from %s: %q", it.Kind, it.Msg.From.ID, it.Msg.Text())
	}
}

// TestTamperedCredentialIsRefused: a JWT whose claims were edited (a wider
// permission) no longer verifies, so the broker turns it away.
func TestTamperedCredentialIsRefused(t *testing.T) {
	store := t.TempDir()
	p := config.Paths{Space: attackSpace, StoreDir: store}
	m := start(t, p, false)
	path, _ := mintTo(t, p, broker.Identity{Space: attackSpace, Principal: wire.Principal{Owner: "local", Actor: "mallory"}}, cliConn(t, m, p))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	jwtText, err := credsJWT(b)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(jwtText, ".")
	claims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var cl map[string]any
	if err := json.Unmarshal(claims, &cl); err != nil {
		t.Fatal(err)
	}
	nats, _ := cl["nats"].(map[string]any)
	nats["pub"] = map[string]any{"allow": []string{">"}}
	nats["sub"] = map[string]any{"allow": []string{">"}}
	edited, _ := json.Marshal(cl)
	parts[1] = base64.RawURLEncoding.EncodeToString(edited)
	tampered := strings.Replace(string(b), jwtText, strings.Join(parts, "."), 1)
	tpath := filepath.Join(t.TempDir(), "tampered.creds")
	if err := os.WriteFile(tpath, []byte(tampered), 0o600); err != nil {
		t.Fatal(err)
	}
	refusedAt(t, m.Broker().URL(), tpath)
	works(t, m.Broker().URL(), path)
}

// credsJWT is the JWT of a decorated creds file.
func credsJWT(b []byte) (string, error) {
	s := string(b)
	start := strings.Index(s, "-----BEGIN NATS USER JWT-----")
	if start < 0 {
		return "", errors.New("no JWT in creds")
	}
	rest := s[start+len("-----BEGIN NATS USER JWT-----"):]
	end := strings.Index(rest, "------END NATS USER JWT------")
	if end < 0 {
		return "", errors.New("unterminated JWT in creds")
	}
	return strings.TrimSpace(rest[:end]), nil
}
