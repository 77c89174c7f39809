package seat_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// TestStoppedSeatKeepsNoDurableHold: once a seat stops, its lifecycle's
// durable memberships end, its stored copies and durables go, and posts to
// its channels store nothing more for it.
func TestStoppedSeatKeepsNoDurableHold(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	dir := config.AgentsDir(h.project)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	persona := "---\nname: member\nagent: command\ncommand: sh\nsubscribe: [team]\nallowPublish: [team]\n---\n"
	if err := os.WriteFile(filepath.Join(dir, "member.md"), []byte(persona), 0o600); err != nil {
		t.Fatal(err)
	}
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "member"})
	if res := goal(t, h.c, h.iid, acc.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
		t.Fatalf("spawn: %s %+v", res.State, res.Error)
	}
	p := wire.Principal{Owner: acc.Owner, Actor: acc.Actor}
	js, err := jetstream.New(h.op)
	if err != nil {
		t.Fatal(err)
	}
	dlv := wire.DlvConsumer(p, acc.UID)
	waitFor(t, 10*time.Second, func() error {
		_, err := js.Consumer(ctxT(t), wire.DlvStream(space), dlv)
		return err
	})

	mustCall(t, h.c, h.iid, "despawn", map[string]any{"name": acc.Name, "graceful": false}, nil)
	waitFor(t, 10*time.Second, func() error {
		for _, c := range []struct{ stream, name string }{{wire.DlvStream(space), dlv}, {wire.DMStream(space), wire.DMConsumer(p, acc.UID)}} {
			if _, err := js.Consumer(ctxT(t), c.stream, c.name); !errors.Is(err, jetstream.ErrConsumerNotFound) {
				return fmt.Errorf("durable %s of the stopped seat: %v", c.name, err)
			}
		}
		return nil
	})

	// Posts after the stop store nothing for the stopped lifecycle.
	// An agent that may post to #team (an observer posts nowhere).
	pid := broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: "poster"}, AllowPublish: wire.ACL{"team"}}
	if err := pid.Normalize(); err != nil {
		t.Fatal(err)
	}
	if err := broker.ProvisionIdentity(ctxT(t), h.op, pid); err != nil {
		t.Fatal(err)
	}
	poster, err := mesh.Connect(ctxT(t), mesh.Options{Conn: h.op, Space: space, OneShot: true, Subscribe: []string{},
		Act: &mesh.Identity{Principal: pid.Principal, UID: pid.UID, AllowPublish: pid.AllowPublish}})
	if err != nil {
		t.Fatal(err)
	}
	defer poster.Close()
	for i := range 3 {
		if _, err := poster.Send(ctxT(t), "team", fmt.Sprintf("after the stop %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// The fan-out has passed every post once CHAT's fanout consumer holds
	// nothing back; then nothing is stored for the stopped lifecycle.
	waitFor(t, 10*time.Second, func() error {
		c, err := js.Consumer(ctxT(t), wire.ChatStream(space), "fanout")
		if err != nil {
			return err
		}
		info, err := c.Info(ctxT(t))
		if err != nil {
			return err
		}
		if info.NumPending+uint64(info.NumAckPending) != 0 {
			return errors.New("fan-out still working")
		}
		return nil
	})
	for _, c := range []struct{ stream, subject string }{
		{wire.InboxStream(space), wire.InboxSubject(space, p, acc.UID)},
		{wire.DlvStream(space), wire.DlvSubject(space, p, acc.UID)},
	} {
		st, err := js.Stream(context.Background(), c.stream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctxT(t), jetstream.WithSubjectFilter(c.subject))
		if err != nil {
			t.Fatal(err)
		}
		if n := info.State.Subjects[c.subject]; n != 0 {
			t.Fatalf("%d copies stored on %s for the stopped seat", n, c.subject)
		}
	}
}
