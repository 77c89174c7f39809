package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testcluster"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// trustedCluster starts a 3-node cluster configured from what `cotal
// broker config` prints for the space at p.
func trustedCluster(t testing.TB, p config.Paths) *testcluster.Cluster {
	t.Helper()
	auth, err := broker.LoadAuthority(p)
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "cotal-trust.conf")
	if err := os.WriteFile(conf, []byte(auth.ServerConfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	return testcluster.Start(t, 3, conf)
}

// TestAuthOnAPersonsCluster configures a cluster from `cotal broker
// config`, runs an authenticated mesh on it with credentials minted from
// the space's keys and, as `up --url --creds` does, with a provisioning
// credential file; the cluster refuses anyone else, and status reads the
// meta leader through the space's system account.
func TestAuthOnAPersonsCluster(t *testing.T) {
	p := config.Paths{Space: "team", StoreDir: t.TempDir()}
	c := trustedCluster(t, p)
	h := startExternalAt(t, p, false, c.URLs(), "")
	if h.Delivery() == nil {
		t.Fatal("an authenticated mesh on a cluster runs no durable delivery")
	}
	ctx := testmesh.Ctx(t)

	// Nobody without a credential the space signed gets in.
	if nc, err := nats.Connect(c.URL(), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("the cluster let a connection without credentials in")
	}
	other := config.Paths{Space: "team", StoreDir: t.TempDir()}
	forger, err := broker.LoadAuthority(other)
	if err != nil {
		t.Fatal(err)
	}
	if nc, err := forger.ConnectSystem(c.URL()); err == nil {
		nc.Close()
		t.Fatal("the cluster let in a system user signed by another space's keys")
	}

	// The operator creds the mesh wrote work against the cluster.
	nc, err := nats.Connect(c.URL(), nats.UserCredentials(p.OperatorCreds()))
	if err != nil {
		t.Fatalf("the local operator's creds on the cluster: %v", err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	s, err := js.Stream(ctx, wire.DMStream("team"))
	if err != nil || s.CachedInfo().Config.Replicas != 3 {
		t.Fatalf("DM stream on the trusted cluster: %v", err)
	}

	status := func() host.Status {
		return host.ReportStatus(ctx, host.StatusQuery{Paths: p,
			Managers: func(context.Context) ([]client.ManagerStatus, error) { return nil, nil }})
	}
	r := status()
	if r.Cluster == nil || r.Cluster.MetaLeader != c.MetaLeader() || r.Cluster.MetaPeers != 3 {
		t.Fatalf("status cluster %+v (error %q), want meta leader %s of 3", r.Cluster, r.Error, c.MetaLeader())
	}
	testutil.WaitFor(t, 20*time.Second, func() error {
		if d := status().Delivery; !strings.HasPrefix(d, "serving") {
			return fmt.Errorf("delivery on the cluster: %s", d)
		}
		return nil
	})
	_ = h.Close()

	// Again with the provisioning identity in a creds file (up --url --creds).
	creds := filepath.Join(t.TempDir(), "provision.creds")
	data, err := os.ReadFile(p.OperatorCreds())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(creds, data, 0o600); err != nil {
		t.Fatal(err)
	}
	h2 := startExternalAt(t, p, false, c.URLs(), creds)
	if h2.Delivery() == nil {
		t.Fatal("no delivery with --creds")
	}
}

// TestRevocationReachesEveryNode re-mints a name on a mesh living on a
// trusted cluster: the earlier credential's connections to every node are
// closed, and no node lets it in again. An agent's credential stays held
// to its own rights there too: it cannot read another's DMs.
func TestRevocationReachesEveryNode(t *testing.T) {
	p := config.Paths{Space: "team", StoreDir: t.TempDir()}
	c := trustedCluster(t, p)
	startExternalAt(t, p, false, c.URLs(), "")
	ctx := testmesh.Ctx(t)
	op, err := nats.Connect(c.URL(), nats.UserCredentials(p.OperatorCreds()))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	carol := broker.Identity{Space: "team", Principal: wire.Principal{Owner: "local", Actor: "carol"}, Subscribe: []string{}, AllowSubscribe: []string{}, AllowPublish: []string{}}
	old, _, err := issue.Mint(ctx, p, carol, op)
	if err != nil {
		t.Fatal(err)
	}
	var conns []*nats.Conn
	for _, u := range c.URLs() {
		nc, err := nats.Connect(u, nats.UserJWTAndSeed(old.JWT, string(old.Seed)), nats.NoReconnect(),
			nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
		if err != nil {
			t.Fatalf("carol's credential on %s: %v", u, err)
		}
		defer nc.Close()
		conns = append(conns, nc)
	}

	// An agent reads no one else's DMs on the cluster either.
	denied := make(chan error, 1)
	spy, err := nats.Connect(c.URLs()[1], nats.UserJWTAndSeed(old.JWT, string(old.Seed)), nats.MaxReconnects(0),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { denied <- err }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := spy.SubscribeSync(wire.DMSubjects("team")); err != nil {
		t.Fatal(err)
	}
	_ = spy.Flush()
	select {
	case err := <-denied:
		if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
			t.Fatalf("subscribing to every DM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cluster let an agent subscribe to every DM of the space")
	}
	spy.Close()

	if _, _, err := issue.Mint(ctx, p, carol, op); err != nil {
		t.Fatalf("re-minting carol on the cluster: %v", err)
	}
	testutil.WaitFor(t, 20*time.Second, func() error {
		var open []string
		for i, nc := range conns {
			if nc.IsConnected() {
				open = append(open, c.NodeName(i))
			}
		}
		if len(open) > 0 {
			return fmt.Errorf("carol's revoked connections to %v are still open (the push went through %s)", open, op.ConnectedServerName())
		}
		return nil
	})
	for _, u := range c.URLs() {
		if nc, err := nats.Connect(u, nats.UserJWTAndSeed(old.JWT, string(old.Seed)), nats.MaxReconnects(0)); err == nil {
			nc.Close()
			t.Fatalf("%s let carol's revoked credential in", u)
		}
	}
}
