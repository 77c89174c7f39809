package seat_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
)

func dialCreds(url, creds string) (*nats.Conn, error) {
	return nats.Connect(url, nats.UserCredentials(creds), nats.Timeout(3*time.Second),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
}

func TestStoppedSeatsCredentialIsRevoked(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	acc := h.ready("shell")
	url := h.m.Broker().URL()

	// What a seat could have copied out of its creds file while it ran.
	file := filepath.Join(seat.LaunchDir(issue.RunDir(h.paths), "shell", acc.UID), "seat.creds")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	stolen := filepath.Join(t.TempDir(), "stolen.creds")
	if err := os.WriteFile(stolen, b, 0o600); err != nil {
		t.Fatal(err)
	}
	live, err := dialCreds(url, stolen)
	if err != nil {
		t.Fatalf("the seat's credential while it runs: %v", err)
	}
	defer live.Close()

	mustCall(t, h.c, h.iid, "despawn", map[string]any{"name": "shell", "graceful": false}, nil)
	waitFor(t, 2*time.Second, func() error {
		if live.IsConnected() {
			return errors.New("a connection with the stopped seat's credential is still up")
		}
		return nil
	})
	nc, err := dialCreds(url, stolen)
	if err == nil {
		nc.Close()
		t.Fatal("the stopped seat's credential still connects")
	}
	if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("refused for another reason: %v", err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the stopped seat's creds file is still there (%v)", err)
	}
	// Its name is free again: the credential that held it is revoked.
	if again := h.ready("shell"); again.Name != "shell" {
		t.Errorf("a new seat of the persona is %q, want the freed name shell", again.Name)
	}
}

func TestNameWithAnUnrevokedCredentialIsNotHandedOut(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("alice", "sh", nil, nil)
	alice := wire.Principal{Owner: "local", Actor: "alice"}
	if _, _, err := issue.Mint(ctxT(t), h.paths, broker.Identity{Space: space, Principal: alice}, h.op); err != nil {
		t.Fatal(err)
	}
	if acc := h.ready("alice"); acc.Name != "alice_2" {
		t.Fatalf("with alice's credential live the seat is named %q, want alice_2", acc.Name)
	}
	_, err := spawn(t, h.c, h.iid, client.SpawnArgs{Persona: "alice", Name: "alice"})
	if e := errCode(t, err); e.Code != proto.CodeAlreadyExists {
		t.Fatalf("pinned spawn of minted alice: %v, want %s", e, proto.CodeAlreadyExists)
	}
	// A re-mint keeps the name held: the new credential is live.
	if _, _, err := issue.Mint(ctxT(t), h.paths, broker.Identity{Space: space, Principal: alice}, h.op); err != nil {
		t.Fatal(err)
	}
	if acc := h.ready("alice"); acc.Name != "alice_3" {
		t.Fatalf("after a re-mint the seat is named %q, want alice_3", acc.Name)
	}
}
