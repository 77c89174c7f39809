package broker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/wire"
)

// dial connects over loopback TCP with a creds file, as an agent would,
// reconnecting as nats.go does by default.
func dial(b *broker.Broker, creds string) (*nats.Conn, error) {
	return nats.Connect(b.URL(), nats.UserCredentials(creds), nats.Timeout(3*time.Second))
}

// refused waits until a fresh connection with creds is turned away.
func refused(t *testing.T, b *broker.Broker, creds string) {
	t.Helper()
	testutil.WaitFor(t, 5*time.Second, func() error {
		nc, err := dial(b, creds)
		if err == nil {
			nc.Close()
			return errors.New("a revoked credential connected")
		}
		if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			return fmt.Errorf("refused for another reason: %v", err)
		}
		return nil
	})
}

// revokeAndApply revokes a credential with a fresh copy of the space's
// authority, the way another process does, and pushes the account JWT over
// a system-account connection.
func revokeAndApply(t *testing.T, b *broker.Broker, p config.Paths, r broker.Revocation) {
	t.Helper()
	auth, err := broker.LoadAuthority(p)
	if err != nil {
		t.Fatal(err)
	}
	err = auth.Revoke([]broker.Revocation{r}, func(ajwt string) error {
		sys, err := auth.ConnectSystem(b.URL())
		if err != nil {
			return err
		}
		defer sys.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return broker.PushAccount(ctx, sys, ajwt)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRevokedCredentialIsDisconnectedAndRefused(t *testing.T) {
	p := config.Paths{Space: "rev", StoreDir: t.TempDir()}
	b, err := broker.Start(broker.Options{Paths: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	op, _ := b.Internal()
	if err := broker.Provision(testmesh.Ctx(t), op, "rev", false, 0); err != nil {
		t.Fatal(err)
	}
	alice := broker.Identity{Principal: wire.Principal{Owner: "local", Actor: "alice"}, Subscribe: []string{"team"}, AllowSubscribe: []string{"team"}}
	bob := broker.Identity{Principal: wire.Principal{Owner: "local", Actor: "bob"}, Subscribe: []string{"team"}, AllowSubscribe: []string{"team"}}
	aliceCreds, aliceID := testmesh.Mint(t, b, alice)
	bobCreds, _ := testmesh.Mint(t, b, bob)
	aliceKey := userKey(t, aliceCreds)

	live, err := dial(b, aliceCreds)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	other, err := dial(b, bobCreds)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	var seen []broker.Revocation
	got := make(chan broker.Revocation, 4)
	stop, err := b.OnRevoked(func(r broker.Revocation) { got <- r })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	revokeAndApply(t, b, p, broker.Revocation{UserKey: aliceKey, Principal: aliceID.Principal.ID(), UID: aliceID.UID})
	// The push returns once the server applied it: the live connection is
	// already being closed, not at some later expiry.
	testutil.WaitFor(t, 2*time.Second, func() error {
		if live.IsConnected() {
			return errors.New("the revoked credential's connection is still up")
		}
		return nil
	})
	refused(t, b, aliceCreds)
	if !other.IsConnected() || other.Flush() != nil {
		t.Fatal("another identity's connection went down with the revoked one")
	}
	select {
	case r := <-got:
		seen = append(seen, r)
	case <-time.After(5 * time.Second):
		t.Fatal("the mesh side was not told of the revocation")
	}
	if seen[0].UserKey != aliceKey || seen[0].UID != aliceID.UID || seen[0].Principal != "local.alice" {
		t.Fatalf("told of %+v", seen[0])
	}

	// A restart issues the account JWT from the recorded revocations.
	b.Shutdown()
	b2, err := broker.Start(broker.Options{Paths: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b2.Shutdown)
	refused(t, b2, aliceCreds)
	nc, err := dial(b2, bobCreds)
	if err != nil {
		t.Fatalf("an unrevoked credential after restart: %v", err)
	}
	nc.Close()
}

func TestAccountUpdateNeedsTheOperatorsSignature(t *testing.T) {
	p := config.Paths{Space: "forged", StoreDir: t.TempDir()}
	b, err := broker.Start(broker.Options{Paths: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	if _, err := b.Internal(); err != nil { // the account is loaded
		t.Fatal(err)
	}
	// An operator the server does not trust signs an account JWT for this
	// account that would lift every limit: the server must not take it.
	okp, _ := nkeys.CreateOperator()
	ac := jwt.NewAccountClaims(b.Authority().AccountKey())
	ac.Limits.Conn = 0 // no connections at all, had it been applied
	forged, err := ac.Encode(okp)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := b.ConnectSystem()
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if err := broker.PushAccount(testmesh.Ctx(t), sys, forged); err == nil {
		t.Fatal("the server applied an account JWT another operator signed")
	}
	nc, err := b.Connect("still-works")
	if err != nil {
		t.Fatalf("the account took the forged limits: %v", err)
	}
	nc.Close()
}

// userKey is the user public key a creds file holds (its JWT's subject).
func userKey(t *testing.T, creds string) string {
	t.Helper()
	b, err := os.ReadFile(creds)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.ParseDecoratedJWT(b)
	if err != nil {
		t.Fatal(err)
	}
	uc, err := jwt.DecodeUserClaims(tok)
	if err != nil {
		t.Fatal(err)
	}
	return uc.Subject
}
