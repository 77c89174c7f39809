package host_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testcluster"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/seat/client"
)

// startExternal starts a host for space on the servers urls, as
// `cotal up --url` does.
func startExternal(t testing.TB, space string, open bool, urls []string, creds string) (*host.Host, config.Paths) {
	t.Helper()
	p := config.Paths{Space: space, StoreDir: t.TempDir()}
	return startExternalAt(t, p, open, urls, creds), p
}

func startExternalAt(t testing.TB, p config.Paths, open bool, urls []string, creds string) *host.Host {
	t.Helper()
	h, err := host.Start(context.Background(), host.Config{Paths: p, Open: open, Servers: urls, Creds: creds, NoManager: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// TestExternalClusterProvisionsR3 runs a mesh on a 3-node cluster it did
// not start: no embedded server, every stream and bucket made with three
// replicas and the same limits as on the embedded broker, and status
// naming the cluster and each stream's replicas and leader.
func TestExternalClusterProvisionsR3(t *testing.T) {
	c := testcluster.Start(t, 3, "")
	h, p := startExternal(t, "ext", true, c.URLs(), "")
	if b := h.Broker(); !b.External() || b.Server() != nil {
		t.Fatalf("the host started a broker of its own on an external cluster")
	}
	if !strings.Contains(h.External(), "cluster "+c.Name()) || !strings.Contains(h.External(), "3 replicas") {
		t.Fatalf("up says %q, not the cluster and its replicas", h.External())
	}
	nc, err := nats.Connect(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := testmesh.Ctx(t)
	want := map[string]jetstream.StreamConfig{}
	for _, cfg := range broker.StreamConfigs("ext", broker.DefaultStoreBudget) {
		want[cfg.Name] = cfg
	}
	for _, name := range broker.SpaceStreams("ext") {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		got := s.CachedInfo().Config
		if got.Replicas != 3 {
			t.Errorf("%s has %d replicas, want 3", name, got.Replicas)
		}
		if w, ok := want[name]; ok {
			if g, w := limitsOf(got), limitsOf(w); !reflect.DeepEqual(g, w) {
				t.Errorf("%s on the cluster is\n%+v\nwant the embedded limits\n%+v", name, g, w)
			}
		}
	}

	r := host.ReportStatus(ctx, host.StatusQuery{Paths: p,
		Managers: func(context.Context) ([]client.ManagerStatus, error) { return nil, nil }})
	if !r.Reachable || r.Cluster == nil {
		t.Fatalf("status of a mesh on a cluster: reachable %v, cluster %+v, error %q", r.Reachable, r.Cluster, r.Error)
	}
	if r.Cluster.Name != c.Name() || len(r.Cluster.Streams) != len(broker.SpaceStreams("ext")) {
		t.Fatalf("status cluster %q with %d streams, want %q with %d", r.Cluster.Name, len(r.Cluster.Streams), c.Name(), len(broker.SpaceStreams("ext")))
	}
	for _, s := range r.Cluster.Streams {
		if s.Replicas != 3 || s.Leader == "" || len(s.Peers) != 2 {
			t.Errorf("status of %s: R%d leader %q peers %d", s.Name, s.Replicas, s.Leader, len(s.Peers))
		}
	}
	if r.Cluster.MetaLeader != "" || r.Cluster.MetaError == "" {
		t.Errorf("an open cluster's meta leader is out of reach, yet status says %q (%q)", r.Cluster.MetaLeader, r.Cluster.MetaError)
	}
}

// TestExternalSingleServerR1 runs a mesh on one external server in no
// cluster: its streams have one replica.
func TestExternalSingleServerR1(t *testing.T) {
	c := testcluster.Start(t, 1, "")
	startExternal(t, "solo", true, c.URLs(), "")
	nc, err := nats.Connect(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	for _, name := range broker.SpaceStreams("solo") {
		s, err := js.Stream(testmesh.Ctx(t), name)
		if err != nil {
			t.Fatal(err)
		}
		if n := s.CachedInfo().Config.Replicas; n != 1 {
			t.Errorf("%s has %d replicas on a lone server", name, n)
		}
	}
}

// limitsOf is what of a stream's configuration provisioning decides, a
// limit the server reads as none (0 or -1) written -1.
func limitsOf(c jetstream.StreamConfig) jetstream.StreamConfig {
	none := func(n int64) int64 {
		if n <= 0 {
			return -1
		}
		return n
	}
	return jetstream.StreamConfig{Name: c.Name, Subjects: c.Subjects, Retention: c.Retention, Discard: c.Discard,
		MaxMsgsPerSubject: none(c.MaxMsgsPerSubject), MaxBytes: none(c.MaxBytes), Duplicates: c.Duplicates,
		NoAck: c.NoAck, RePublish: c.RePublish, DenyDelete: c.DenyDelete, DenyPurge: c.DenyPurge, Storage: c.Storage}
}
