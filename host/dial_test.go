package host_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
)

// TestACommandsConnectionClosesWhenItsMeshGoes: a command's connection to
// the mesh (an attach, a follow, a one-shot) is closed the moment the mesh
// goes, never left reconnecting: through a reconnect wait an attach would
// type into a dead connection, the keys lost, before redialling the mesh
// that took its place.
func TestACommandsConnectionClosesWhenItsMeshGoes(t *testing.T) {
	p := config.Paths{Space: "dial", StoreDir: filepath.Join(t.TempDir(), "store")}
	h, err := host.Start(context.Background(), host.Config{Paths: p, NoManager: true})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := host.Resolve(p, "", "", config.TLSTrust{})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := tg.Connect("dial test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	changes := nc.StatusChanged(nats.RECONNECTING, nats.CLOSED)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case st := <-changes:
		if st != nats.CLOSED {
			t.Fatalf("the connection went %v when its mesh went; want closed", st)
		}
	case <-time.After(time.Minute):
		t.Fatal("the connection neither closed nor reconnected within a minute of its mesh going")
	}
}
