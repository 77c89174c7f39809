package host_test

// A PubAck, or any other answer the server sends, goes to whatever reply
// subject the publisher names, from inside the account. This test aims
// every publish an agent's credential allows at every subject of the
// space's subject map (every bucket key, every stream subject, the contract
// store, the reply rails, inboxes, receipts, stored notices, the JetStream
// API and acks), then checks that nothing landed, that the mesh still
// delivers, that it restarts, and that what it reports is still the truth.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

const reflectSpace = "reflect"

// answerShaped reports a body a JetStream answer would carry: a PubAck
// ({"stream","seq"}, maybe "duplicate" and "domain") or an API reply.
func answerShaped(data []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	_, stream := m["stream"]
	_, seq := m["seq"]
	_, typ := m["type"]
	return stream && seq || typ && strings.HasPrefix(strings.Trim(string(m["type"]), `"`), "io.nats.jetstream.api")
}

// concrete makes a subject pattern a subject: every `*` a fresh token,
// a trailing `>` one token.
func concrete(pattern string) string {
	toks := strings.Split(pattern, ".")
	for i, tok := range toks {
		switch tok {
		case "*":
			toks[i] = proto.NewNonce()
		case ">":
			toks[i] = "x"
		}
	}
	return strings.Join(toks, ".")
}

// subjectMap is every subject of the space a reply could be aimed at.
func subjectMap(t *testing.T, js jetstream.JetStream, space string, victims ...broker.Identity) []string {
	t.Helper()
	ctx := testmesh.Ctx(t)
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, b := range broker.BucketConfigs(space, 0) {
		kv, err := js.KeyValue(ctx, b.Bucket)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := kv.Keys(ctx)
		if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
			t.Fatal(err)
		}
		if len(keys) > 40 {
			keys = keys[:40]
		}
		for _, k := range keys {
			add("$KV." + b.Bucket + "." + k)
		}
		add("$KV." + b.Bucket + ".never.written")
	}
	add("$KV." + wire.DeliveryBucket(space) + "." + delivery.LeaseKey)
	for _, v := range victims {
		add("$KV." + wire.RecordsBucket(space) + "." + wire.IdentityKey(v.Principal))
		add("$KV." + wire.ACLBucket(space) + "." + wire.ACLKey(v.Principal, v.UID))
		add("$KV." + wire.PresenceBucket(space) + "." + v.Principal.ID())
		add(wire.DlvSubject(space, v.Principal, v.UID))
		add(wire.InboxSubject(space, v.Principal, v.UID))
		add(wire.DMSubject(space, v.Principal, wire.Principal{Owner: "local", Actor: "carol"}))
		add(wire.Root(space) + ".chat." + v.Principal.Owner + "." + v.Principal.Actor + ".team")
		add(wire.Root(space) + ".svc.reviewer." + v.Principal.Owner + "." + v.Principal.Actor)
		add(concrete(wire.StoredFilter(space, v.Principal)))
		add(wire.ReceiptFilter(space, v.Principal) + ".some-id")
		add(concrete(proto.CallerReplyFilter(space, proto.Caller{Owner: v.Principal.Owner, Actor: v.Principal.Actor, UID: v.UID})))
		add(v.InboxPrefix() + ".x")
	}
	for _, s := range broker.StreamConfigs(space, 0) {
		st, err := js.Stream(ctx, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(">"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for subj := range info.State.Subjects {
			if n++; n > 40 {
				break
			}
			add(subj)
		}
		add(concrete(s.Subjects[0]))
		add("$JS.API.STREAM.PURGE." + s.Name)
		add("$JS.API.STREAM.DELETE." + s.Name)
		for name := range st.ConsumerNames(ctx).Name() {
			add("$JS.API.CONSUMER.DELETE." + s.Name + "." + name)
			add("$JS.ACK." + s.Name + "." + name + ".1.1.1.1.0")
		}
	}
	add("$JS.API.STREAM.CREATE.SPY")
	return out
}

// streamState is each stream's last sequence, and the number of messages
// on each subject of the streams agents publish to.
type streamState struct {
	last     map[string]uint64
	subjects map[string]map[string]uint64
}

func snapshotStreams(t *testing.T, js jetstream.JetStream, space string) streamState {
	t.Helper()
	ctx := testmesh.Ctx(t)
	s := streamState{last: map[string]uint64{}, subjects: map[string]map[string]uint64{}}
	for name := range js.StreamNames(ctx).Name() {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(">"))
		if err != nil {
			t.Fatal(err)
		}
		s.last[name] = info.State.LastSeq
		s.subjects[name] = info.State.Subjects
	}
	return s
}

func TestNoServerAnswerLandsOnTheSpacesSubjects(t *testing.T) {
	p := config.Paths{Space: reflectSpace, StoreDir: t.TempDir()}
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, ".cotal", "agents"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".cotal", "agents", "shell.md"), []byte("---\nname: shell\nagent: command\ncommand: sh\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := host.Config{Paths: p, ProjectDir: project, Readiness: 10 * time.Second}
	m, err := host.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	op := cliConn(t, m, p)
	js := mustJS(t, m)
	reg, err := mesh.OpenRegistry(ctx, js, reflectSpace)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Set(ctx, "team", mesh.ChannelConfig{DeliveryClass: mesh.ClassDurable}); err != nil {
		t.Fatal(err)
	}
	alicePath, alice := mintTo(t, p, broker.Identity{Space: reflectSpace, Principal: wire.Principal{Owner: "local", Actor: "alice"},
		Role: "reviewer", Subscribe: []string{"team"}, AllowSubscribe: []string{"team"}, AllowPublish: []string{"team", "team.>"}}, op)
	bobPath, bob := mintTo(t, p, broker.Identity{Space: reflectSpace, Principal: wire.Principal{Owner: "local", Actor: "bob"},
		Role: "reviewer", Subscribe: []string{"team"}, AllowSubscribe: []string{"team"}, AllowPublish: []string{"team"}}, op)
	opID, err := broker.ReadCredsIdentity(p.OperatorCreds())
	if err != nil {
		t.Fatal(err)
	}
	connect := func(m *host.Host, path string) *mesh.Endpoint {
		t.Helper()
		e, err := mesh.Connect(ctx, mesh.Options{URL: m.Broker().URL(), Creds: path, OneShot: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	// Bob holds #team durably and goes away; posts and a DM wait for him.
	b0 := connect(m, bobPath)
	if _, err := b0.Send(ctx, "team", "bob before"); err != nil {
		t.Fatal(err)
	}
	_ = b0.Close()
	ae := connect(m, alicePath)
	if _, err := ae.Send(ctx, "team", "alice before"); err != nil {
		t.Fatal(err)
	}
	if _, err := ae.DM(ctx, "local.bob", "dm before"); err != nil {
		t.Fatal(err)
	}
	// A seat, so the manager's records, goals and contracts are there.
	opc, err := ep.NewClient(op, ep.ClientOptions{Space: reflectSpace, Caller: proto.Caller{Owner: opID.Principal.Owner, Actor: opID.Principal.Actor, UID: opID.UID}, SharedConn: true})
	if err != nil {
		t.Fatal(err)
	}
	iid := m.Manager().InstanceID()
	if _, err := opc.Call(ctx, wire.ManagerEndpoint, "spawn", client.SpawnArgs{Persona: "shell"}, ep.On(iid)); err != nil {
		t.Fatal(err)
	}

	targets := subjectMap(t, js, reflectSpace, alice, bob, opID)
	before := snapshotStreams(t, js, reflectSpace)
	tap := testmesh.NewTap(t, op, ">")
	a := connectAttacker(t, m.Broker().URL(), alicePath, alice)
	var stored atomic.Int64
	if _, err := a.nc.Subscribe(wire.StoredFilter(reflectSpace, alice.Principal), func(*nats.Msg) { stored.Add(1) }); err != nil {
		t.Fatal(err)
	}
	var publishable []string
	for _, row := range alice.Permissions().Pub.Allow {
		publishable = append(publishable, concrete(row))
	}
	agentStored := 0 // publishes a stream agents publish to stores
	aim := func(subject, reply string) {
		if err := a.nc.PublishMsg(&nats.Msg{Subject: subject, Reply: reply, Data: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		// The server refuses a client's publish whose reply is an ack
		// subject outright (a reply subject violation): not stored.
		if s, err := wire.ParseSubject(subject); err == nil && s.Kind != "" && !strings.HasPrefix(reply, "$JS.ACK.") {
			agentStored++
		}
	}
	for _, target := range targets {
		for _, subject := range publishable {
			aim(subject, target)
		}
	}
	// A thousand aimed at bob's stored copies, which once evicted them all.
	chat := wire.Root(reflectSpace) + ".chat.local.alice.team"
	for range 1000 {
		aim(chat, wire.DlvSubject(reflectSpace, bob.Principal, bob.UID))
	}
	if err := a.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 60*time.Second, func() error {
		if n := stored.Load(); n < int64(agentStored) {
			return fmt.Errorf("%d of alice's %d stored publishes confirmed", n, agentStored)
		}
		return nil
	})
	// Anything still travelling after the last store is through: a flush.
	if err := op.Flush(); err != nil {
		t.Fatal(err)
	}

	// Nothing landed: no answer on any target, no answer stored anywhere,
	// nothing new on another sender's subject.
	isTarget := map[string]bool{}
	for _, s := range targets {
		isTarget[s] = true
	}
	for _, msg := range tap.All() {
		if isTarget[msg.Subject] && answerShaped(msg.Data) {
			t.Errorf("a server answer reached %s: %s", msg.Subject, msg.Data)
		}
	}
	after := snapshotStreams(t, js, reflectSpace)
	for name, last := range after.last {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatalf("stream %s after the reflections: %v", name, err)
		}
		for seq := before.last[name] + 1; seq <= last; seq++ {
			raw, err := st.GetMsg(ctx, seq)
			if err != nil {
				continue // rolled off or a deleted KV entry
			}
			if answerShaped(raw.Data) {
				t.Errorf("%s seq %d on %s holds a server answer: %s", name, seq, raw.Subject, raw.Data)
			}
		}
	}
	for _, name := range []string{wire.ChatStream(reflectSpace), wire.DMStream(reflectSpace), wire.TaskStream(reflectSpace)} {
		for subj, n := range after.subjects[name] {
			s, err := wire.ParseSubject(subj)
			if err == nil && s.Sender == alice.Principal {
				continue
			}
			if n != before.subjects[name][subj] {
				t.Errorf("%s: %s went from %d to %d messages", name, subj, before.subjects[name][subj], n)
			}
		}
	}
	for name := range before.last {
		if _, ok := after.last[name]; !ok {
			t.Errorf("stream %s is gone", name)
		}
	}

	// The mesh still delivers and reports the truth, now and after a restart.
	check := func(m *host.Host, when string) {
		t.Helper()
		sender := connect(m, alicePath)
		dm := "dm " + when
		if _, err := sender.DM(ctx, "local.bob", dm); err != nil {
			t.Fatalf("%s: alice's DM: %v", when, err)
		}
		if _, err := sender.Send(ctx, "team", "alice "+when); err != nil {
			t.Fatalf("%s: alice's post: %v", when, err)
		}
		be := connect(m, bobPath)
		var got []string
		testutil.WaitFor(t, 20*time.Second, func() error {
			items, err := be.Collect(ctx, 0)
			if err != nil {
				return err
			}
			for _, it := range items {
				_ = it.Ack()
				got = append(got, it.Subject.Sender.Actor+": "+it.Msg.Text())
			}
			if !slices.Contains(got, "alice: "+dm) || !slices.Contains(got, "alice: alice "+when) {
				return fmt.Errorf("%s: bob has %q", when, got)
			}
			return nil
		})
		js := mustJS(t, m)
		for _, v := range []broker.Identity{opID, alice, bob} {
			rec, found, err := broker.LookupIdentity(ctx, js, reflectSpace, v.Principal)
			if err != nil || !found || rec.ID != v.Principal.ID() || rec.Profile != v.Profile || rec.LifecycleUID != v.UID {
				t.Errorf("%s: the identity record of %s: %+v found=%v %v", when, v.Principal, rec, found, err)
			}
		}
		for _, v := range []broker.Identity{alice, bob} {
			ent, err := kvOf(t, m, wire.ACLBucket(reflectSpace)).Get(ctx, wire.ACLKey(v.Principal, v.UID))
			var row wire.ACLRow
			if err != nil || json.Unmarshal(ent.Value(), &row) != nil || row.Principal != v.Principal.ID() || row.LifecycleUID != v.UID || row.Ended() {
				t.Errorf("%s: the ACL row of %s: %v", when, v.Principal, err)
			}
		}
		ent, err := kvOf(t, m, wire.DeliveryBucket(reflectSpace)).Get(ctx, delivery.LeaseKey)
		var lease struct {
			Holder, Incarnation string
		}
		if err != nil || json.Unmarshal(ent.Value(), &lease) != nil || lease.Holder == "" || !wire.ValidLifecycleUID(lease.Incarnation) {
			t.Errorf("%s: the delivery lease: %v", when, err)
		}
		hist, _, err := be.History(ctx, "team", 100)
		if err != nil {
			t.Fatalf("%s: history: %v", when, err)
		}
		for _, h := range hist {
			if h.Msg.From.ID != "local.alice" && h.Msg.From.ID != "local.bob" {
				t.Errorf("%s: a post in history from %q: %+v", when, h.Msg.From.ID, h.Msg)
			}
		}
		opc, err := ep.NewClient(op, ep.ClientOptions{Space: reflectSpace, Caller: proto.Caller{Owner: opID.Principal.Owner, Actor: opID.Principal.Actor, UID: opID.UID}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := opc.Call(ctx, wire.ManagerEndpoint, "ps", nil, ep.On(m.Manager().InstanceID())); err != nil {
			t.Errorf("%s: the operator's ps: %v", when, err)
		}
	}
	check(m, "after the reflections")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m2, err := host.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("the mesh does not start again after the reflections: %v", err)
	}
	t.Cleanup(func() { _ = m2.Close() })
	op = cliConn(t, m2, p)
	check(m2, "after a restart")
}

// TestARestartAfterAnOldAttackComesUp: a store attacked before answers were
// stopped holds PubAck bodies on its contract subjects, its lease, the
// operator's identity record and an agent's ACL row. The mesh starts on it,
// serves, and repairs what it rewrites at start.
func TestARestartAfterAnOldAttackComesUp(t *testing.T) {
	p := config.Paths{Space: reflectSpace, StoreDir: t.TempDir()}
	cfg := host.Config{Paths: p, ProjectDir: t.TempDir(), Readiness: 10 * time.Second}
	m, err := host.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testmesh.Ctx(t)
	op := cliConn(t, m, p)
	alicePath, alice := mintTo(t, p, broker.Identity{Space: reflectSpace, Principal: wire.Principal{Owner: "local", Actor: "alice"}, Subscribe: []string{"team"}, AllowSubscribe: []string{"team"}, AllowPublish: []string{"team"}}, op)
	opID, err := broker.ReadCredsIdentity(p.OperatorCreds())
	if err != nil {
		t.Fatal(err)
	}
	js := mustJS(t, m)
	pubAck := []byte(`{"stream":"CHAT_reflect","seq":105}`)
	st, err := js.Stream(ctx, wire.EPCStream(reflectSpace))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(">"))
	if err != nil || len(info.State.Subjects) == 0 {
		t.Fatalf("contract subjects: %v %v", info, err)
	}
	for subj := range info.State.Subjects {
		if _, err := js.Publish(ctx, subj, pubAck); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []struct{ bucket, key string }{
		{wire.DeliveryBucket(reflectSpace), delivery.LeaseKey},
		{wire.RecordsBucket(reflectSpace), wire.IdentityKey(opID.Principal)},
		{wire.ACLBucket(reflectSpace), wire.ACLKey(alice.Principal, alice.UID)},
	} {
		if _, err := kvOf(t, m, key.bucket).Put(ctx, key.key, pubAck); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	m2, err := host.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("the mesh does not start on an attacked store: %v", err)
	}
	t.Cleanup(func() { _ = m2.Close() })
	if took := time.Since(start); took > broker.DeliveryLeaseTTL {
		t.Errorf("the start took %s: longer than the lease TTL", took)
	}
	js2 := mustJS(t, m2)
	rec, found, err := broker.LookupIdentity(ctx, js2, reflectSpace, opID.Principal)
	if err != nil || !found || rec.Profile != wire.ProfileOperator {
		t.Errorf("the operator's record after the start: %+v %v %v", rec, found, err)
	}
	e, err := mesh.Connect(ctx, mesh.Options{URL: m2.Broker().URL(), Creds: alicePath, OneShot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Send(ctx, "team", "after"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.History(ctx, "team", 10); err != nil {
		t.Errorf("alice's history after the start: %v", err)
	}
}
