package broker_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
)

// The trust block is the same each time it is printed until something in
// it changes: a JWT signed afresh differs by its issue time alone, which
// a person keeping the block in their server configuration sees as churn.
func TestTrustBlockIsStableUntilItChanges(t *testing.T) {
	p := config.Paths{Space: "stable", StoreDir: t.TempDir()}
	first := loadTrust(t, p)
	ac, err := jwt.DecodeAccountClaims(first.ResolverPreload[first.Account])
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the clock to pass the second the account was signed in, so
	// a JWT signed again would carry another issue time.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Unix() <= ac.IssuedAt; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the clock did not move past the account's issue time")
		}
	}
	if again := loadTrust(t, p); again.Config != first.Config {
		t.Fatalf("the block changed with nothing in it changed:\n%s\n---\n%s", first.Config, again.Config)
	}

	// A revocation changes the account, and the block shows it from then on.
	auth, err := broker.LoadAuthority(p)
	if err != nil {
		t.Fatal(err)
	}
	ukp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	user, _ := ukp.PublicKey()
	if err := auth.Revoke([]broker.Revocation{{UserKey: user, Principal: "local.gone"}}, nil); err != nil {
		t.Fatal(err)
	}
	revoked := loadTrust(t, p)
	if revoked.OperatorJWT != first.OperatorJWT || revoked.ResolverPreload[first.SystemAccount] != first.ResolverPreload[first.SystemAccount] {
		t.Fatal("a revocation re-signed the operator or the system account")
	}
	rc, err := jwt.DecodeAccountClaims(revoked.ResolverPreload[revoked.Account])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rc.Revocations[user]; !ok {
		t.Fatalf("the account printed after a revocation does not carry it: %v", rc.Revocations)
	}
	if again := loadTrust(t, p); again.Config != revoked.Config {
		t.Fatal("the block after the revocation changed on the next load")
	}

	// A record that does not hold (edited, or from other keys) is signed afresh.
	issued := filepath.Join(p.AuthDir(), "issued.json")
	b, err := os.ReadFile(issued)
	if err != nil {
		t.Fatal(err)
	}
	tok := revoked.ResolverPreload[revoked.Account]
	forged := tok[:len(tok)-4] + "AAAA"
	if err := os.WriteFile(issued, []byte(strings.ReplaceAll(string(b), tok, forged)), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := loadTrust(t, p)
	if got := fresh.ResolverPreload[fresh.Account]; got == forged {
		t.Fatal("an account JWT whose signature does not hold was printed")
	}
	if _, err := jwt.DecodeAccountClaims(fresh.ResolverPreload[fresh.Account]); err != nil {
		t.Fatalf("the account signed afresh does not decode: %v", err)
	}
}

func loadTrust(t *testing.T, p config.Paths) broker.ServerTrust {
	t.Helper()
	auth, err := broker.LoadAuthority(p)
	if err != nil {
		t.Fatal(err)
	}
	return auth.Trusted()
}
