package host_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/wire"
)

// linkedState says of the space's DM stream whether it has subjects of
// its own and how many peers it sources.
func linkedState(t *testing.T, h *host.Host, space string) (subjects bool, peers int) {
	t.Helper()
	nc, err := h.Broker().Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, wire.DMStream(space))
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range s.CachedInfo().Config.Sources {
		if src.External != nil {
			peers++
		}
	}
	return len(s.CachedInfo().Config.Subjects) > 0, peers
}

// A hub started with the leaves leaf-creds recorded links its streams to
// them and says so in broker.json; started again without a link, its
// streams take their subjects back and source no one.
func TestAHubLinksItsLeavesAndAStartWithoutALinkUnlinks(t *testing.T) {
	p := config.Paths{Space: "pair", StoreDir: filepath.Join(t.TempDir(), "store")}
	ctx := context.Background()
	m, err := host.MintLink(ctx, p, "lap", "")
	if err != nil {
		t.Fatal(err)
	}
	if tags, err := broker.ReadLinkCreds(m.Path); err != nil || tags.Leaf != "lap" || tags.Hub != host.DefaultHubDomain {
		t.Fatalf("minted %+v: %v", tags, err)
	}
	leaf, err := host.ResolveLeaf(p, host.LeafFlags{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Start(ctx, host.Config{Paths: p, NoManager: true, Leaf: leaf})
	if err != nil {
		t.Fatal(err)
	}
	if subj, peers := linkedState(t, h, p.Space); subj || peers != 1 {
		t.Fatalf("linked hub: DM stream has subjects %v, sources %d peers; want none and 1", subj, peers)
	}
	rec, err := config.ReadBrokerRecord(p)
	if err != nil || rec.Leaf == nil || rec.Leaf.Domain != "hub" || rec.Leaf.Listen == "" || len(rec.Leaf.Peers) != 1 {
		t.Fatalf("broker.json leaf %+v: %v", rec.Leaf, err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}

	h, err = host.Start(ctx, host.Config{Paths: p, NoManager: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if subj, peers := linkedState(t, h, p.Space); !subj || peers != 0 {
		t.Fatalf("unlinked: DM stream has subjects %v, sources %d peers; want its subjects and none", subj, peers)
	}
	if rec, _ := config.ReadBrokerRecord(p); rec.Leaf != nil {
		t.Fatalf("broker.json of an unlinked start names a leaf: %+v", rec.Leaf)
	}
}

// A leaf's link credential must be for its space, and --domain cannot
// rename the leaf its hub sources.
func TestResolveLeafRefusesAnotherSpacesCredential(t *testing.T) {
	hubP := config.Paths{Space: "pair", StoreDir: filepath.Join(t.TempDir(), "hub")}
	m, err := host.MintLink(context.Background(), hubP, "lap", "")
	if err != nil {
		t.Fatal(err)
	}
	other := config.Paths{Space: "other", StoreDir: filepath.Join(t.TempDir(), "lap")}
	if _, err := host.ResolveLeaf(other, host.LeafFlags{Remote: "nats://127.0.0.1:7422", Creds: m.Path}); err == nil {
		t.Fatal("a credential of space pair linked space other")
	}
	same := config.Paths{Space: "pair", StoreDir: filepath.Join(t.TempDir(), "lap")}
	if _, err := host.ResolveLeaf(same, host.LeafFlags{Remote: "nats://127.0.0.1:7422", Creds: m.Path, Domain: "elsewhere"}); err == nil {
		t.Fatal("--domain renamed the leaf the hub sources")
	}
	l, err := host.ResolveLeaf(same, host.LeafFlags{Remote: "nats://127.0.0.1:7422", Creds: m.Path})
	if err != nil || l.Domain != "lap" || len(l.Peers) != 1 || l.Peers[0] != "hub" {
		t.Fatalf("leaf %+v: %v", l, err)
	}
}

// A link credential minted again for the same leaf replaces the one
// before: the running hub closes the link the old one holds and refuses it
// from then on, and the new one links.
func TestAnotherLinkCredentialRevokesTheOneBefore(t *testing.T) {
	hubP := config.Paths{Space: "pair", StoreDir: filepath.Join(t.TempDir(), "hub")}
	ctx := context.Background()
	first, err := host.MintLink(ctx, hubP, "lap", filepath.Join(t.TempDir(), "first.creds"))
	if err != nil {
		t.Fatal(err)
	}
	hl, err := host.ResolveLeaf(hubP, host.LeafFlags{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	hub, err := host.Start(ctx, host.Config{Paths: hubP, NoManager: true, Leaf: hl})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	startLeaf := func(creds string, log io.Writer) *host.Host {
		t.Helper()
		p := config.Paths{Space: "pair", StoreDir: filepath.Join(t.TempDir(), "lap")}
		l, err := host.ResolveLeaf(p, host.LeafFlags{Remote: "nats://" + hub.Broker().LeafAddr(), Creds: creds})
		if err != nil {
			t.Fatal(err)
		}
		h, err := host.Start(ctx, host.Config{Paths: p, NoManager: true, Leaf: l, Log: log})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		return h
	}
	links := func(want int) func() error {
		return func() error {
			if n := hub.Broker().LeafLinks(); n != want {
				return fmt.Errorf("the hub has %d leaf links, want %d", n, want)
			}
			return nil
		}
	}
	var oldLog lockedLog
	old := startLeaf(first.Path, &oldLog)
	testutil.WaitFor(t, 30*time.Second, links(1))

	second, err := host.MintLink(ctx, hubP, "lap", filepath.Join(t.TempDir(), "second.creds"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 30*time.Second, links(0))
	// The old side redials every second: it must stay out, through two
	// redials the hub refused.
	refusals := oldLog.count("Authorization Violation")
	testutil.WaitFor(t, 30*time.Second, func() error {
		if n := hub.Broker().LeafLinks(); n != 0 {
			t.Fatalf("the revoked link credential linked again (%d links)", n)
		}
		if n := oldLog.count("Authorization Violation") - refusals; n < 2 {
			return fmt.Errorf("the old leaf was refused %d time(s) since the re-mint, want 2", n)
		}
		return nil
	})
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	startLeaf(second.Path, nil)
	testutil.WaitFor(t, 30*time.Second, links(1))
}

// lockedLog is a log a broker writes from its own goroutines while the
// test reads it.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}
