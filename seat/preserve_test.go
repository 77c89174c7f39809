package seat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
)

// Preserve fences the manager (a spawn is refused, saying why), stops the
// seat without ending its lifecycle (its creds file stays), and writes a
// 0600 inventory that names the seat, its persona and its durable
// consumers' positions, and holds none of its credential. The inventory is
// not ready until its mark is written, and a mark vouches only for the
// inventory it was written for.
func TestPreserveFencesStopsAndInventories(t *testing.T) {
	t.Parallel()
	h := startMesh(t, 0)
	h.persona("keepme", "sh", nil, nil)
	acc := h.ready("keepme")
	dir := filepath.Join(t.TempDir(), "preserved")
	inv, err := h.m.Manager().Preserve(ctxT(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := spawn(t, h.c, h.iid, client.SpawnArgs{Persona: "keepme"}); err == nil {
		t.Fatal("a fenced manager accepted a spawn")
	} else if e := errCode(t, err); e.Code != ep.CodeUnavailable || !strings.Contains(e.Message, "--preserve-state") {
		t.Fatalf("a fenced manager's refusal: %+v; want unavailable, naming --preserve-state", e)
	}
	if len(inv.Seats) != 1 {
		t.Fatalf("inventory seats: %+v", inv.Seats)
	}
	ps := inv.Seats[0]
	if ps.Name != acc.Name || ps.UID != acc.UID || ps.Harness != "command" || len(ps.Agent) == 0 || ps.LaunchDir == "" {
		t.Fatalf("preserved seat: %+v; want %s %s with its persona", ps, acc.Name, acc.UID)
	}
	if ps.Process.Alive() || ps.Keeper.Alive() {
		t.Fatalf("the seat's process or keeper runs after Preserve: %s, %s", ps.Process, ps.Keeper)
	}
	var dm bool
	for _, c := range ps.Cut {
		dm = dm || c.Consumer == wire.DMConsumer(ps.Principal, ps.UID)
	}
	if !dm || inv.Streams[wire.DMStream(space)] == 0 && len(inv.Streams) == 0 {
		t.Fatalf("the cut misses the seat's DM consumer or the streams: %+v %v", ps.Cut, inv.Streams)
	}
	creds, err := os.ReadFile(ps.Creds)
	if err != nil {
		t.Fatalf("the preserved seat's creds file is gone: %v", err)
	}
	path := filepath.Join(dir, "inventory.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("inventory mode %v; want 0600", fi.Mode().Perm())
	}
	for _, l := range strings.Split(string(creds), "\n") {
		if len(l) > 20 && strings.Contains(string(b), l) {
			t.Fatalf("the inventory holds a line of the seat's creds: %q", l)
		}
	}
	if _, ready, err := seat.ReadInventory(dir); err != nil || ready {
		t.Fatalf("an inventory without its mark: ready %v, %v; want not ready", ready, err)
	}
	if err := seat.MarkReady(dir, seat.ReadyMark{}); err != nil {
		t.Fatal(err)
	}
	if got, ready, err := seat.ReadInventory(dir); err != nil || !ready || got.Seats[0].UID != acc.UID {
		t.Fatalf("a marked inventory: ready %v, %v", ready, err)
	}
	if err := os.WriteFile(path, append(b, ' '), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ready, _ := seat.ReadInventory(dir); ready {
		t.Fatal("a mark vouches for an inventory other than the one it was written for")
	}
}
