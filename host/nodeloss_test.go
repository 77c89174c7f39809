package host_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// reader takes everything that reaches one endpoint, acks it, and counts
// each message id it was handed.
type reader struct {
	mu      sync.Mutex
	seen    map[string]int
	ackErrs []string
}

func (r *reader) run(ctx context.Context, e *mesh.Endpoint) {
	for {
		it, err := e.Next(ctx)
		if err != nil {
			return
		}
		if it.Echo {
			continue
		}
		r.mu.Lock()
		r.seen[it.Msg.ID]++
		r.mu.Unlock()
		if err := it.Ack(); err != nil {
			r.mu.Lock()
			r.ackErrs = append(r.ackErrs, err.Error())
			r.mu.Unlock()
		}
	}
}

func (r *reader) missingOrTwice(ids []string) (missing, twice []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		switch r.seen[id] {
		case 0:
			missing = append(missing, id)
		case 1:
		default:
			twice = append(twice, fmt.Sprintf("%s x%d", id, r.seen[id]))
		}
	}
	if len(twice) > 0 && len(r.ackErrs) > 0 {
		twice = append(twice, "(ack errors: "+strings.Join(r.ackErrs, "; ")+")")
	}
	return missing, twice
}

// TestClusterNodeLossLosesNothing runs an authenticated mesh on a trusted
// cluster of three nats-server processes with R3 streams and kills the
// node leading the DM stream with SIGKILL in the middle of 1000 messages
// (500 DMs, 500 durable posts): every one the
// sender had acknowledged reaches the reader, none twice; the reader's
// presence view stays or comes back current. Then two of the three nodes
// go: no quorum, the presence view goes stale, and it recovers once they
// are back.
func TestClusterNodeLossLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test: a cluster, 1000 messages and three failovers")
	}
	p := config.Paths{Space: "team", StoreDir: t.TempDir()}
	c := trustedCluster(t, p)
	h := startExternalAt(t, p, false, c.URLs(), "")
	b := h.Broker()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	aliceCreds, _ := testmesh.Mint(t, b, broker.Identity{Space: "team", Principal: wire.Principal{Owner: "local", Actor: "alice"},
		Subscribe: []string{}, AllowSubscribe: []string{}, AllowPublish: []string{"team"}})
	bobCreds, _ := testmesh.Mint(t, b, broker.Identity{Space: "team", Principal: wire.Principal{Owner: "local", Actor: "bob"},
		Subscribe: []string{"team"}, AllowSubscribe: []string{"team"}, AllowPublish: []string{}})
	connect := func(creds string) *mesh.Endpoint {
		e, err := mesh.Connect(ctx, mesh.Options{URL: c.URL(), Creds: creds, Logf: func(f string, a ...any) { t.Logf("endpoint: "+f, a...) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	bob := connect(bobCreds)
	testutil.WaitFor(t, 30*time.Second, func() error {
		ms, err := bob.Memberships(ctx)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.Channel == "team" && m.Activated {
				return nil
			}
		}
		return fmt.Errorf("bob holds no active durable membership of team: %+v", ms)
	})
	alice := connect(aliceCreds)
	rv, err := bob.Watcher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := &reader{seen: map[string]int{}}
	rctx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	go r.run(rctx, bob)

	nc, err := nats.Connect(c.URL(), nats.UserCredentials(p.OperatorCreds()), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	leaderOf := func(stream string) int {
		s, err := js.Stream(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if s.CachedInfo().Cluster != nil && s.CachedInfo().Cluster.Leader == c.NodeName(i) {
				return i
			}
		}
		t.Fatalf("stream %s has no leader", stream)
		return -1
	}

	// Each message is sent until the mesh acknowledges it, under one id
	// throughout: a send refused or unanswered during a failover is sent
	// again, and the stream's dedup window keeps that one message.
	const n = 500
	var ids []string
	began := time.Now()
	killed := -1
	for i := range n {
		if i == n/2 {
			killed = leaderOf(wire.DMStream("team"))
			t.Logf("kill -9 of %s, the DM stream's leader, after %d DMs and %d posts", c.NodeName(killed), i, i)
			c.Kill(killed)
		}
		for kind, send := range map[string]func(context.Context, string) error{
			"dm": func(ctx context.Context, id string) error {
				_, err := alice.DM(ctx, "bob", "dm "+id, mesh.WithID(id))
				return err
			},
			"post": func(ctx context.Context, id string) error {
				_, err := alice.Send(ctx, "team", "post "+id, mesh.WithID(id))
				return err
			},
		} {
			id := fmt.Sprintf("%s-%04d-%s", kind, i, wire.NewLifecycleUID())
			deadline := time.Now().Add(90 * time.Second)
			for {
				sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
				err := send(sctx, id)
				scancel()
				if err == nil {
					break
				}
				if ctx.Err() != nil || time.Now().After(deadline) {
					t.Fatalf("%s %d never acknowledged within 90 s: %v", kind, i, err)
				}
				time.Sleep(50 * time.Millisecond) // the sender's connection is moving to another node
			}
			ids = append(ids, id)
		}
	}
	t.Logf("%d messages acknowledged in %s across the failover", len(ids), time.Since(began).Round(time.Millisecond))
	// A post the fan-out had been handed by the lost node's consumer
	// leader waits out the delivery consumers' ack wait (60 s) before it
	// is handed out again: the bound is four of those.
	testutil.WaitFor(t, 4*time.Minute, func() error {
		missing, twice := r.missingOrTwice(ids)
		if len(twice) > 0 {
			t.Fatalf("delivered twice to bob: %v", twice)
		}
		if len(missing) > 0 {
			return fmt.Errorf("%d of %d acknowledged messages not at bob yet, first %s", len(missing), len(ids), missing[0])
		}
		return nil
	})
	testutil.WaitFor(t, 30*time.Second, func() error {
		if v := rv.View(); v.State != presence.Current {
			return fmt.Errorf("bob's presence view is %s after one node went", v.State)
		}
		return nil
	})

	t.Logf("all at bob, once each, %s after the first send", time.Since(began).Round(time.Millisecond))

	// Two of three gone: no quorum, no presence write lands, the view
	// goes stale; back, it recovers.
	c.Restart(killed)
	c.WaitMetaLeader(30 * time.Second)
	other := (killed + 1) % 3
	third := (killed + 2) % 3
	c.Kill(other)
	c.Kill(third)
	testutil.WaitFor(t, 30*time.Second, func() error {
		if v := rv.View(); v.State != presence.Stale {
			return fmt.Errorf("bob's presence view is %s with two of three nodes down", v.State)
		}
		return nil
	})
	c.Restart(other)
	c.Restart(third)
	testutil.WaitFor(t, 60*time.Second, func() error {
		if v := rv.View(); v.State != presence.Current {
			return fmt.Errorf("bob's presence view is %s with the cluster back", v.State)
		}
		return nil
	})
	// Nothing came twice through all of it.
	if _, twice := r.missingOrTwice(ids); len(twice) > 0 {
		t.Fatalf("delivered twice to bob after the quorum came back: %v", twice)
	}
	if !strings.HasPrefix(h.External(), "external NATS cluster") {
		t.Fatalf("the mesh lost sight of its cluster: %s", h.External())
	}
}
