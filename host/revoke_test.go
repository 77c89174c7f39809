package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
)

// endings records the lifecycles a mesh says it ended.
type endings struct {
	mu  sync.Mutex
	got []string
}

func (e *endings) add(p wire.Principal, uid string) {
	e.mu.Lock()
	e.got = append(e.got, p.ID()+"/"+uid)
	e.mu.Unlock()
}

func (e *endings) has(p wire.Principal, uid string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, g := range e.got {
		if g == p.ID()+"/"+uid {
			return nil
		}
	}
	return fmt.Errorf("the mesh ended %v, not %s/%s", e.got, p, uid)
}

func startWatched(t *testing.T, p config.Paths) (*host.Host, *endings) {
	t.Helper()
	e := &endings{}
	m, err := host.Start(context.Background(), host.Config{Paths: p, NoManager: true, OnLifecycleEnded: e.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m, e
}

// cliConn is the local operator's connection as the CLI opens it: over
// loopback TCP with the operator creds file, another process's view.
func cliConn(t *testing.T, m *host.Host, p config.Paths) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(m.Broker().URL(), nats.UserCredentials(p.OperatorCreds()), nats.MaxReconnects(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// mintTo mints id with issue.Mint and writes its creds where an agent keeps them.
func mintTo(t *testing.T, p config.Paths, id broker.Identity, nc *nats.Conn) (string, broker.Identity) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := issue.Mint(ctx, p, id, nc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), c.Identity.UID+".creds")
	if err := broker.WriteCreds(path, c); err != nil {
		t.Fatal(err)
	}
	return path, c.Identity
}

func agentConn(url, creds string) (*nats.Conn, error) {
	return nats.Connect(url, nats.UserCredentials(creds), nats.Timeout(3*time.Second),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
}

// refusedAt waits until a fresh connection with creds is turned away for
// its authorization.
func refusedAt(t *testing.T, url, creds string) {
	t.Helper()
	testutil.WaitFor(t, 5*time.Second, func() error {
		nc, err := agentConn(url, creds)
		if err == nil {
			nc.Close()
			return errors.New("the revoked credential connected")
		}
		if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			return fmt.Errorf("refused for another reason: %v", err)
		}
		return nil
	})
}

func works(t *testing.T, url, creds string) {
	t.Helper()
	nc, err := agentConn(url, creds)
	if err != nil {
		t.Fatalf("an unrevoked credential: %v", err)
	}
	nc.Close()
}

func kvOf(t *testing.T, m *host.Host, bucket string) jetstream.KeyValue {
	t.Helper()
	nc, err := m.Broker().Internal()
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(context.Background(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func hasKey(kv jetstream.KeyValue, key string) bool {
	_, err := kv.Get(context.Background(), key)
	return err == nil
}

func TestRemintRevokesTheEarlierCredential(t *testing.T) {
	p := config.Paths{Space: "remint", StoreDir: t.TempDir()}
	m, ended := startWatched(t, p)
	cli := cliConn(t, m, p)
	alice := broker.Identity{Space: "remint", Principal: wire.Principal{Owner: "local", Actor: "alice"}, Subscribe: []string{"team"}, AllowSubscribe: []string{"team"}}
	oldCreds, oldID := mintTo(t, p, alice, cli)

	live, err := agentConn(m.Broker().URL(), oldCreds)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	acl := kvOf(t, m, wire.ACLBucket("remint"))
	if !hasKey(acl, wire.ACLKey(alice.Principal, oldID.UID)) {
		t.Fatal("the first credential has no ACL row")
	}

	newCreds, newID := mintTo(t, p, alice, cli)
	// Mint returned: the running mesh applied the revocation already.
	testutil.WaitFor(t, time.Second, func() error {
		if live.IsConnected() {
			return errors.New("the earlier credential's connection is still up after mint returned")
		}
		return nil
	})
	refusedAt(t, m.Broker().URL(), oldCreds)
	works(t, m.Broker().URL(), newCreds)

	testutil.WaitFor(t, 5*time.Second, func() error {
		ent, err := acl.Get(context.Background(), wire.ACLKey(alice.Principal, oldID.UID))
		if err != nil {
			return nil // gone
		}
		var row wire.ACLRow
		if json.Unmarshal(ent.Value(), &row) != nil || !row.Ended() || len(row.AllowSubscribe) != 0 {
			return fmt.Errorf("the revoked lifecycle's ACL row still grants: %s", ent.Value())
		}
		return nil
	})
	if !hasKey(acl, wire.ACLKey(alice.Principal, newID.UID)) {
		t.Error("the new lifecycle has no ACL row")
	}
	rec, found, err := broker.LookupIdentity(context.Background(), mustJS(t, m), "remint", alice.Principal)
	if err != nil || !found || rec.LifecycleUID != newID.UID {
		t.Errorf("identity record names %q (found %v, %v), want the newest %s", rec.LifecycleUID, found, err, newID.UID)
	}
	testutil.WaitFor(t, 5*time.Second, func() error { return ended.has(alice.Principal, oldID.UID) })
	if err := ended.has(alice.Principal, newID.UID); err == nil {
		t.Error("the mesh ended the new lifecycle too")
	}
	uids, err := issue.Lifecycles(p, alice.Principal)
	if err != nil || len(uids) != 1 || uids[0] != newID.UID {
		t.Errorf("live lifecycles of alice %v (%v), want only %s", uids, err, newID.UID)
	}
}

func mustJS(t *testing.T, m *host.Host) jetstream.JetStream {
	t.Helper()
	nc, err := m.Broker().Internal()
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	return js
}

func TestRevocationsSurviveRestarts(t *testing.T) {
	p := config.Paths{Space: "again", StoreDir: t.TempDir()}
	m, _ := startWatched(t, p)
	bob := broker.Identity{Space: "again", Principal: wire.Principal{Owner: "local", Actor: "bob"}, Subscribe: []string{"team"}, AllowSubscribe: []string{"team"}}
	first, firstID := mintTo(t, p, bob, cliConn(t, m, p))
	url := m.Broker().URL()
	works(t, url, first)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	// Re-minted while the mesh is down: recorded now, refused from the next up.
	second, secondID := mintTo(t, p, bob, nil)
	m2, ended := startWatched(t, p)
	refusedAt(t, m2.Broker().URL(), first)
	works(t, m2.Broker().URL(), second)
	acl := kvOf(t, m2, wire.ACLBucket("again"))
	if hasKey(acl, wire.ACLKey(bob.Principal, firstID.UID)) {
		t.Error("the lifecycle revoked while down kept its ACL row")
	}
	if !hasKey(acl, wire.ACLKey(bob.Principal, secondID.UID)) {
		t.Error("the re-minted lifecycle has no ACL row")
	}
	if err := ended.has(bob.Principal, firstID.UID); err != nil {
		t.Errorf("start did not end the lifecycle revoked while down: %v", err)
	}
	if err := m2.Close(); err != nil {
		t.Fatal(err)
	}

	// And once more: nothing re-provisions or forgets the revoked one.
	m3, _ := startWatched(t, p)
	refusedAt(t, m3.Broker().URL(), first)
	works(t, m3.Broker().URL(), second)
	if hasKey(kvOf(t, m3, wire.ACLBucket("again")), wire.ACLKey(bob.Principal, firstID.UID)) {
		t.Error("a restart brought the revoked lifecycle's ACL row back")
	}
	b, err := os.ReadFile(broker.RevocationsFile(p))
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(broker.RevocationsFile(p)); st.Mode().Perm() != 0o600 {
		t.Errorf("revocations file mode %v, want 0600", st.Mode().Perm())
	}
	var f struct {
		Revoked []broker.Revocation `json:"revoked"`
	}
	if err := json.Unmarshal(b, &f); err != nil || len(f.Revoked) != 1 || f.Revoked[0].UID != firstID.UID || f.Revoked[0].Principal != "local.bob" {
		t.Errorf("revocations file %s (%v), want bob's first lifecycle", b, err)
	}
}

// envMintSeat makes the test binary a process that mints a seat credential
// for the store dir it names, as a manager would, prints the creds path and
// exits: a seat host that is gone.
const envMintSeat = "COTAL_TEST_MINT_SEAT"

func mintSeatAndExit(dir string) int {
	p := config.Paths{Space: "orphan", StoreDir: dir}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := issue.NewSeatMinter(p, nil, false).MintSeat(ctx, seat.MintRequest{Name: "ghost"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Println(s.Creds)
	return 0
}

func TestSeatsOfAGoneProcessAreRevokedAtStart(t *testing.T) {
	p := config.Paths{Space: "orphan", StoreDir: t.TempDir()}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envMintSeat+"="+p.StoreDir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the seat host: %v", err)
	}
	ghostFile := strings.TrimSpace(string(out))
	ghost := filepath.Join(t.TempDir(), "ghost.creds") // what the seat could have copied
	b, err := os.ReadFile(ghostFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ghost, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// A seat whose host (this process) still runs keeps its credential.
	kept, err := issue.NewSeatMinter(p, nil, false).MintSeat(context.Background(), seat.MintRequest{Name: "kept"})
	if err != nil {
		t.Fatal(err)
	}
	ghostP, keptP := wire.Principal{Owner: "local", Actor: "ghost"}, wire.Principal{Owner: "local", Actor: "kept"}
	if !issue.Held(p, ghostP) || !issue.Held(p, keptP) {
		t.Fatal("the minted seat names are not held before the start")
	}

	m, _ := startWatched(t, p)
	refusedAt(t, m.Broker().URL(), ghost)
	works(t, m.Broker().URL(), kept.Creds)
	if issue.Held(p, ghostP) {
		t.Error("the gone seat's name is still held")
	}
	if !issue.Held(p, keptP) {
		t.Error("the running seat's name is no longer held")
	}
	if _, err := os.Stat(ghostFile); !os.IsNotExist(err) {
		t.Errorf("the gone seat's creds file is still there (%v)", err)
	}
}
