package issue_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
)

// With no mesh running, issuing works on the store alone: a revocation
// waits in the revocations file for the next start.
func TestMintWhileDownRevokesTheEarlierAndRetireEnds(t *testing.T) {
	p := config.Paths{Space: "down", StoreDir: t.TempDir()}
	ctx := context.Background()
	alice := broker.Identity{Space: "down", Principal: wire.Principal{Owner: "local", Actor: "alice"}}
	first, provisioned, err := issue.Mint(ctx, p, alice, nil)
	if err != nil || provisioned {
		t.Fatalf("first mint: provisioned %v, %v", provisioned, err)
	}
	second, _, err := issue.Mint(ctx, p, alice, nil)
	if err != nil {
		t.Fatal(err)
	}
	uids, err := issue.Lifecycles(p, alice.Principal)
	if err != nil || len(uids) != 1 || uids[0] != second.Identity.UID {
		t.Fatalf("lifecycles after a re-mint: %v %v; want only %s", uids, err, second.Identity.UID)
	}
	revs, err := broker.ReadRevocations(p)
	if err != nil || len(revs) != 1 || revs[0].UserKey != first.UserKey {
		t.Fatalf("revocations: %+v %v; want the first credential's key", revs, err)
	}
	if !issue.Held(p, alice.Principal) {
		t.Fatal("alice's name is free while her credential is live")
	}
	if err := issue.Retire(ctx, p, alice.Principal, second.Identity.UID, nil); err != nil {
		t.Fatal(err)
	}
	if issue.Held(p, alice.Principal) {
		t.Fatal("alice's name is held after her last credential was retired")
	}
}

func TestSeatMinterWritesCredsIntoTheLaunchDirectory(t *testing.T) {
	p := config.Paths{Space: "seats", StoreDir: t.TempDir()}
	m := issue.NewSeatMinter(p, nil, false)
	got, err := m.MintSeat(context.Background(), seat.MintRequest{Name: "shell"})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(got.Creds)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("seat creds %s: %v %v; want a 0600 file", got.Creds, fi, err)
	}
	if want := seat.LaunchDir(issue.RunDir(p), "shell", got.UID); !isUnder(got.Creds, want) {
		t.Fatalf("seat creds at %s, want under %s", got.Creds, want)
	}
	if !m.Taken("shell") {
		t.Fatal("a live seat's name is not taken")
	}
	if err := m.Retire(context.Background(), got.Principal, got.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(got.Creds); !os.IsNotExist(err) {
		t.Fatalf("retired seat's creds still there: %v", err)
	}
	if m.Taken("shell") {
		t.Fatal("a retired seat's name is still taken")
	}
	open := issue.NewSeatMinter(p, nil, true)
	if o, err := open.MintSeat(context.Background(), seat.MintRequest{Name: "x"}); err != nil || o.Creds != "" {
		t.Fatalf("open mode: %+v %v; want no creds", o, err)
	}
}

func isUnder(path, dir string) bool {
	return len(path) > len(dir) && path[:len(dir)] == dir && path[len(dir)] == os.PathSeparator
}

// TestMintRefusesNamesThatAreNotFree: the operator's name (any case), the
// mesh's own service names, and a name held under another profile or in
// another case are refused; minting the same principal with the same
// profile again is still a re-mint.
func TestMintRefusesNamesThatAreNotFree(t *testing.T) {
	p := config.Paths{Space: "names", StoreDir: t.TempDir()}
	ctx := context.Background()
	named := func(actor string, prof wire.Profile) broker.Identity {
		return broker.Identity{Space: "names", Principal: wire.Principal{Owner: "local", Actor: actor}, Profile: prof}
	}
	if _, _, err := issue.Mint(ctx, p, named("watcher", wire.ProfileObserver), nil); err != nil {
		t.Fatal(err)
	}
	op := issue.OperatorPrincipal().Actor
	for _, c := range []struct {
		actor string
		prof  wire.Profile
	}{
		{op, wire.ProfileAgent}, {op, wire.ProfileOperator}, {strings.ToUpper(op), wire.ProfileAgent},
		{"cotal_delivery", wire.ProfileAgent}, {"COTAL_x", wire.ProfileObserver}, {"delivery", wire.ProfileAgent}, {"manager", wire.ProfileAgent},
		{"watcher", wire.ProfileAgent}, {"Watcher", wire.ProfileObserver},
	} {
		if _, _, err := issue.Mint(ctx, p, named(c.actor, c.prof), nil); !errors.Is(err, issue.ErrReservedName) {
			t.Errorf("mint %s as %s: %v, want ErrReservedName", c.actor, c.prof, err)
		}
	}
	if _, _, err := issue.Mint(ctx, p, named("watcher", wire.ProfileObserver), nil); err != nil {
		t.Errorf("re-minting watcher as an observer: %v", err)
	}
	if uids, _ := issue.Lifecycles(p, wire.Principal{Owner: "local", Actor: "watcher"}); len(uids) != 1 {
		t.Errorf("watcher holds %d credentials after the refusals and a re-mint, want 1", len(uids))
	}
}
