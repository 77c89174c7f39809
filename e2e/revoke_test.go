package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// mintJSON runs `cotal mint <args> --json`, requires exit 0 and returns
// the creds path and lifecycle uid, with the creds copied aside (the next
// mint of the name writes the same default path).
func mintJSON(t *testing.T, home string, args ...string) (creds, uid string, revoked []string) {
	t.Helper()
	stdout, stderr, code := runCotal(t, home, append(append([]string{"mint"}, args...), "--json")...)
	if code != 0 {
		t.Fatalf("mint %v: exit %d\nstdout: %s\nstderr: %s", args, code, stdout, stderr)
	}
	var out struct {
		Creds        string   `json:"creds"`
		LifecycleUID string   `json:"lifecycleUid"`
		Revoked      []string `json:"revoked"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("mint --json: %v\n%s", err, stdout)
	}
	b, err := os.ReadFile(out.Creds)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), out.LifecycleUID+".creds")
	if err := os.WriteFile(copyPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return copyPath, out.LifecycleUID, out.Revoked
}

func dialAgent(url, creds string) (*nats.Conn, error) {
	return nats.Connect(url, nats.UserCredentials(creds), nats.Timeout(5*time.Second),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
}

func TestRemintWhileUpEndsTheEarlierCredential(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	url, _ := upDetached(t, home)

	oldCreds, oldUID, _ := mintJSON(t, home, "alice", "--subscribe", "team")
	live, err := dialAgent(url, oldCreds)
	if err != nil {
		t.Fatalf("alice's first credential: %v", err)
	}
	defer live.Close()

	newCreds, _, revoked := mintJSON(t, home, "alice", "--subscribe", "team")
	if len(revoked) != 1 || revoked[0] != oldUID {
		t.Errorf("mint --json revoked %v, want [%s]", revoked, oldUID)
	}
	// mint is another process than the mesh; it returned, so the mesh has
	// applied the revocation and dropped the connection.
	waitFor(t, 2*time.Second, func() error {
		if live.IsConnected() {
			return errors.New("the earlier credential's connection is still up")
		}
		return nil
	})
	if nc, err := dialAgent(url, oldCreds); err == nil {
		nc.Close()
		t.Fatal("the earlier credential still connects")
	} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("refused for another reason: %v", err)
	}
	nc, err := dialAgent(url, newCreds)
	if err != nil {
		t.Fatalf("the new credential: %v", err)
	}
	nc.Close()
}

func TestRemintWhileDownIsRefusedByTheNextUp(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	oldCreds, _, _ := mintJSON(t, home, "carol")
	newCreds, _, _ := mintJSON(t, home, "carol")
	url, _ := upDetached(t, home)
	if nc, err := dialAgent(url, oldCreds); err == nil {
		nc.Close()
		t.Fatal("a credential re-minted while the mesh was down still connects")
	}
	nc, err := dialAgent(url, newCreds)
	if err != nil {
		t.Fatalf("the new credential: %v", err)
	}
	nc.Close()
}

func TestMintWithCredsIsRefused(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	agent, _, _ := mintJSON(t, home, "alice")
	out := filepath.Join(t.TempDir(), "eve.creds")
	for _, args := range [][]string{
		{"--creds", agent, "mint", "eve", "--profile", "operator", "--out", out},
		{"mint", "eve", "--creds", agent, "--out", out},
	} {
		stdout, stderr, code := runCotal(t, home, args...)
		if code != 2 || !strings.Contains(stderr, "signing key") || !strings.Contains(stderr, "without --creds") {
			t.Errorf("cotal %v: exit %d, stderr %q; want exit 2 saying minting needs the signing key, run without --creds", args, code, stderr)
		}
		if stdout != "" {
			t.Errorf("cotal %v printed %q", args, stdout)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("cotal %v wrote a credential (%v)", args, err)
		}
	}
}
