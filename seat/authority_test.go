package seat_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// owned addresses a seat in owner mode, as a spawn-capable agent must.
func owned(acc client.SpawnAccepted) ep.CallOption {
	return ep.WithTarget(proto.ModeOwner, proto.BodyTarget{Owner: acc.Owner, Actor: acc.Name, LifecycleUID: acc.UID})
}

// anyMode addresses a seat in any mode, as the operator types into it.
func anyMode(acc client.SpawnAccepted) ep.CallOption {
	return ep.WithTarget(proto.ModeAny, proto.BodyTarget{Owner: acc.Owner, Actor: acc.Name, LifecycleUID: acc.UID})
}

// TestOwnerModeReachesOnlyOwnSeats: a spawn-capable agent may inspect, read
// and stop the seats it spawned, and no other seat, even one another agent
// of the same owner spawned.
func TestOwnerModeReachesOnlyOwnSeats(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	alice := h.agentClient("alice", broker.CapSpawn)
	bob := h.agentClient("bob", broker.CapSpawn)
	mine := mustSpawn(t, alice, h.iid, client.SpawnArgs{Persona: "shell", Name: "mine"})
	theirs := mustSpawn(t, bob, h.iid, client.SpawnArgs{Persona: "shell", Name: "theirs"})
	for _, acc := range []client.SpawnAccepted{mine, theirs} {
		c := alice
		if acc.Name == "theirs" {
			c = bob
		}
		if res := goal(t, c, h.iid, acc.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
			t.Fatalf("spawn of %s: %s %+v", acc.Name, res.State, res.Error)
		}
	}

	var r client.Row
	if _, err := alice.Call(ctxT(t), wire.ManagerEndpoint, "inspect", map[string]any{"name": "mine"}, ep.On(h.iid), owned(mine)); err != nil {
		t.Fatalf("the spawner inspecting its own seat: %v", err)
	}
	for _, cmd := range []string{"inspect", "screen", "despawn"} {
		_, err := alice.Call(ctxT(t), wire.ManagerEndpoint, cmd, map[string]any{"name": "theirs"}, ep.On(h.iid), owned(theirs))
		e := errCode(t, err)
		if e.Code != proto.CodePermissionDenied || !strings.Contains(e.Message, "did not spawn") {
			t.Fatalf("%s of another agent's seat: %v", cmd, e)
		}
	}
	if r, _ = row(ps(t, h.c, h.iid), "theirs"); r.Process != "running" {
		t.Fatalf("the other agent's seat after the refusals: %+v", r)
	}
	// A stale lifecycle in the target is expired, never acted on.
	stale := mine
	stale.UID = wire.NewLifecycleUID()
	_, err := alice.Call(ctxT(t), wire.ManagerEndpoint, "despawn", map[string]any{"name": "mine"}, ep.On(h.iid), owned(stale))
	if e := errCode(t, err); e.Code != proto.CodeExpired {
		t.Fatalf("despawn naming a stale lifecycle: %v", e)
	}
	if _, err := alice.Call(ctxT(t), wire.ManagerEndpoint, "despawn", map[string]any{"name": "mine", "graceful": false}, ep.On(h.iid), owned(mine)); err != nil {
		t.Fatalf("the spawner stopping its own seat: %v", err)
	}
	if r, _ = row(ps(t, h.c, h.iid), "mine"); r.Process == "running" {
		t.Fatalf("the spawner's stop left its seat running: %+v", r)
	}
}

// TestCallerMustBeALiveMintedLifecycle: a request whose subject names a
// caller the space never minted (what a replayed or deputized publish
// would carry), or a lifecycle other than the current one, is refused
// before it runs, even on a connection the broker lets publish anything.
func TestCallerMustBeALiveMintedLifecycle(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell"})
	if res := goal(t, h.c, h.iid, acc.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
		t.Fatalf("spawn: %s %+v", res.State, res.Error)
	}
	ghost := h.client(h.op, proto.Caller{Owner: "local", Actor: "ghost", UID: wire.NewLifecycleUID()})
	oldOperator := h.client(h.op, proto.Caller{Owner: h.caller.Owner, Actor: h.caller.Actor, UID: wire.NewLifecycleUID()})
	for name, c := range map[string]*ep.Client{"never minted": ghost, "not the current lifecycle": oldOperator} {
		for _, cmd := range []string{"input", "ps", "despawn"} {
			args := map[string]any{"name": acc.Name}
			opts := []ep.CallOption{ep.On(h.iid)}
			if cmd == "input" {
				args["text"] = "echo PWNED"
				opts = append(opts, anyMode(acc))
			}
			if cmd == "ps" {
				args = nil
			}
			_, err := c.Call(ctxT(t), wire.ManagerEndpoint, cmd, args, opts...)
			e := errCode(t, err)
			if e.Code != proto.CodePermissionDenied || e.EffectiveOutcome() != proto.NotExecuted {
				t.Fatalf("%s caller, %s: %v (%s), want permission-denied not-executed", name, cmd, e, e.EffectiveOutcome())
			}
		}
	}
	input(t, h.c, h.iid, acc.Name, "echo operator-mark''er")
	if text := waitScreen(t, h.c, h.iid, acc.Name, "operator-marker", 5*time.Second); strings.Contains(text, "PWNED") {
		t.Fatalf("a refused input reached the seat:\n%s", text)
	}
}

// TestInputBounds: input text is 1 to 65536 characters (spec item 58); a
// text outside is refused before anything is typed, one at the bound runs.
func TestInputBounds(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "shell"})
	if res := goal(t, h.c, h.iid, acc.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
		t.Fatalf("spawn: %s %+v", res.State, res.Error)
	}
	for _, text := range []string{"", strings.Repeat("x", client.MaxInput+1)} {
		_, err := h.c.Call(ctxT(t), wire.ManagerEndpoint, "input", client.InputArgs{Name: acc.Name, Text: text}, ep.On(h.iid), anyMode(acc))
		if e := errCode(t, err); e.Code != proto.CodeBadRequest || e.EffectiveOutcome() != proto.NotExecuted {
			t.Fatalf("input of %d characters: %v, want bad-request not-executed", len(text), e)
		}
	}
	no := false
	r, err := h.c.Call(ctxT(t), wire.ManagerEndpoint, "input", client.InputArgs{Name: acc.Name, Text: "-" + strings.Repeat("é", client.MaxInput-1), Enter: &no}, ep.On(h.iid), anyMode(acc))
	if err != nil {
		t.Fatal(err)
	}
	var in client.InputReply
	if err := decode(r.Data, &in); err != nil {
		t.Fatal(err)
	}
	if want := 1 + 2*(client.MaxInput-1); in.Bytes != want {
		t.Fatalf("input at the bound: %d bytes accepted, want %d", in.Bytes, want)
	}
}

// TestCallerRecordsFollowTheBucket: the manager answers from its copy of
// the identity records only while the bucket still says the caller is
// current: a record retired, moved to another lifecycle, overwritten with
// garbage or deleted refuses the caller's next calls, and restoring it
// admits them again.
func TestCallerRecordsFollowTheBucket(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	js, err := jetstream.New(h.op)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctxT(t), wire.RecordsBucket(space))
	if err != nil {
		t.Fatal(err)
	}
	key := wire.IdentityKey(wire.Principal{Owner: h.caller.Owner, Actor: h.caller.Actor})
	ent, err := kv.Get(ctxT(t), key)
	if err != nil {
		t.Fatal(err)
	}
	good := ent.Value()
	var rec wire.IdentityRecord
	if err := json.Unmarshal(good, &rec); err != nil {
		t.Fatal(err)
	}
	call := func() error {
		_, err := h.c.Call(ctxT(t), wire.ManagerEndpoint, "ps", nil, ep.On(h.iid))
		return err
	}
	// until polls the operator's calls until want says yes of the error.
	until := func(what string, want func(error) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := call()
			if want(err) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the operator's call still gives %v", what, err)
			}
		}
	}
	admitted := func(err error) bool { return err == nil }
	refused := func(code string) func(error) bool {
		return func(err error) bool {
			e := proto.AsError(err)
			return e != nil && e.Code == code && e.EffectiveOutcome() == proto.NotExecuted
		}
	}
	put := func(v []byte) {
		t.Helper()
		if _, err := kv.Put(ctxT(t), key, v); err != nil {
			t.Fatal(err)
		}
	}
	variant := func(change func(*wire.IdentityRecord)) []byte {
		r := rec
		change(&r)
		b, _ := json.Marshal(r)
		return b
	}
	until("before any change", admitted)

	put(variant(func(r *wire.IdentityRecord) { r.Retired = true }))
	until("the record retired", refused(proto.CodePermissionDenied))
	put(good)
	until("the record restored", admitted)

	put(variant(func(r *wire.IdentityRecord) { r.LifecycleUID = wire.NewLifecycleUID() }))
	until("the record naming another lifecycle", refused(proto.CodePermissionDenied))
	put(good)
	until("the record restored", admitted)

	put(variant(func(r *wire.IdentityRecord) { r.ID = "local.someone_else" }))
	until("the record naming another principal", refused(proto.CodeUnavailable))
	put([]byte("not a record"))
	until("garbage in the record", refused(proto.CodeUnavailable))
	put(good)
	until("the record restored", admitted)

	if err := kv.Delete(ctxT(t), key); err != nil {
		t.Fatal(err)
	}
	until("the record deleted", refused(proto.CodePermissionDenied))
	put(good)
	until("the record restored", admitted)
}

// TestAgentCannotFeedTheRecordsCopy: the manager's copy of the identity
// records is fed by a watch whose deliver subject an agent could learn.
// An agent publishing a record there, naming a caller the space never
// minted as current, is refused by the broker, and the manager goes on
// refusing that caller.
func TestAgentCannotFeedTheRecordsCopy(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	js, err := jetstream.New(h.op)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctxT(t), "KV_"+wire.RecordsBucket(space))
	if err != nil {
		t.Fatal(err)
	}
	var delivers []string
	testutil.WaitFor(t, 10*time.Second, func() error {
		delivers = delivers[:0]
		for ci := range st.ListConsumers(ctxT(t)).Info() {
			if ci.Config.DeliverSubject != "" {
				delivers = append(delivers, ci.Config.DeliverSubject)
			}
		}
		if len(delivers) == 0 {
			return errors.New("no watch on the records bucket yet")
		}
		return nil
	})

	cr, err := h.m.Broker().Authority().Mint(broker.Identity{
		Space: space, Principal: wire.Principal{Owner: "local", Actor: "mallory"}, AllowPublish: []string{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := broker.ProvisionIdentity(ctxT(t), h.op, cr.Identity); err != nil {
		t.Fatal(err)
	}
	refused := make(chan error, 16)
	nc, err := nats.Connect(h.m.Broker().URL(), nats.UserJWTAndSeed(cr.JWT, string(cr.Seed)), nats.CustomInboxPrefix(cr.Identity.InboxPrefix()),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { refused <- err }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)

	ghost := wire.Principal{Owner: "local", Actor: "ghost"}
	uid := wire.NewLifecycleUID()
	forged, _ := json.Marshal(wire.IdentityRecord{ID: ghost.ID(), Name: "ghost", Profile: wire.ProfileOperator, LifecycleUID: uid})
	for _, d := range delivers {
		m := nats.NewMsg(d)
		m.Data = forged
		m.Reply = "$JS.ACK.KV_" + wire.RecordsBucket(space) + ".x.1.999.999.1800000000000000000.0"
		m.Header.Set("Nats-Subject", "$KV."+wire.RecordsBucket(space)+"."+wire.IdentityKey(ghost))
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-refused:
		if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
			t.Fatalf("the forged update was answered with %v, want a permissions violation", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the broker took the agent's publish onto the manager's watch")
	}
	as := h.client(h.op, proto.Caller{Owner: ghost.Owner, Actor: ghost.Actor, UID: uid})
	_, err = as.Call(ctxT(t), wire.ManagerEndpoint, "ps", nil, ep.On(h.iid))
	if e := errCode(t, err); e.Code != proto.CodePermissionDenied || e.EffectiveOutcome() != proto.NotExecuted {
		t.Fatalf("the ghost the agent forged a record for: %v, want permission-denied not-executed", e)
	}
}
