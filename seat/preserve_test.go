package seat_test

import (
	"fmt"
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
	"github.com/cotal-go/cotal/seat/keeper"
	"github.com/cotal-go/cotal/seat/sandbox"
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
	dir := filepath.Join(t.TempDir(), "control")
	inv, err := h.m.Manager().Preserve(ctxT(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := spawn(t, h.c, h.iid, client.SpawnArgs{Persona: "keepme"}); err == nil {
		t.Fatal("a fenced manager accepted a spawn")
	} else if e := errCode(t, err); e.Code != proto.CodeUnavailable || !strings.Contains(e.Message, "--preserve-state") {
		t.Fatalf("a fenced manager's refusal: %+v; want unavailable, naming --preserve-state", e)
	}
	if len(inv.Seats) != 1 {
		t.Fatalf("inventory seats: %+v", inv.Seats)
	}
	ps := inv.Seats[0]
	if ps.Name != acc.Name || ps.UID != acc.UID || ps.Harness != "command" || len(ps.Agent) == 0 || ps.LaunchDir == "" {
		t.Fatalf("preserved seat: %+v; want %s %s with its persona", ps, acc.Name, acc.UID)
	}
	if ps.Process.PID == 0 || ps.Keeper.PID == 0 {
		t.Fatalf("the inventory names no seat process or keeper: %+v", ps)
	}
	// The keeper goes once it has reported its seat's end; what
	// `down --preserve-state` proves before the mark.
	waitFor(t, 10*time.Second, func() error {
		if ps.Process.Alive() || ps.Keeper.Alive() {
			return fmt.Errorf("the seat's process (%s, alive %v) or keeper (%s, alive %v) runs after Preserve", ps.Process, ps.Process.Alive(), ps.Keeper, ps.Keeper.Alive())
		}
		return nil
	})
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

// A seat, in its sandbox and with its credential on the wire, reaches no
// part of another seat's custody or of the resume inventory: it cannot see
// the other seat's keeper socket, record or persona, cannot read the
// inventory or its mark, cannot leave a stop request for the mesh, and
// its credential cannot read the other seat's consumer positions (the
// cut) from JetStream.
func TestSeatCannotReachKeepersOrTheInventory(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	other := h.ready("shell")
	run := issue.RunDir(h.paths)
	control := seat.ControlDir(run)
	for _, f := range []string{"inventory.json", "ready.json"} {
		if err := os.WriteFile(filepath.Join(control, f), []byte(`{"v":1}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kdir := keeper.Dir(run, other.Name, other.UID)
	out := filepath.Join(t.TempDir(), "probe.txt")
	var b strings.Builder
	b.WriteString(`try() { if cat "$2" >/dev/null 2>&1; then echo "LEAK $1"; else echo "DENY $1"; fi; }` + "\n")
	b.WriteString(`see() { if [ -e "$2" ]; then echo "LEAK $1"; else echo "DENY $1"; fi; }` + "\n")
	b.WriteString(`put() { if echo 1 > "$2" 2>/dev/null; then echo "LEAK $1"; else echo "DENY $1"; fi; }` + "\n{\n")
	fmt.Fprintf(&b, "see keeper-sock '%s'\n", filepath.Join(kdir, "sock"))
	fmt.Fprintf(&b, "try keeper-record '%s'\n", filepath.Join(kdir, "keeper.json"))
	fmt.Fprintf(&b, "try persona '%s'\n", filepath.Join(kdir, "persona.json"))
	fmt.Fprintf(&b, "try custody '%s'\n", filepath.Join(kdir, "seat.json"))
	fmt.Fprintf(&b, "try inventory '%s'\n", filepath.Join(control, "inventory.json"))
	fmt.Fprintf(&b, "try ready '%s'\n", filepath.Join(control, "ready.json"))
	fmt.Fprintf(&b, "put request '%s'\n", filepath.Join(control, "preserve-state"))
	fmt.Fprintf(&b, "put keep-request '%s'\n", filepath.Join(control, "keep-seats"))
	b.WriteString("echo END\n} > " + out + " 2>&1\necho probed\nexec sleep 60\n")
	h.persona("prober", "sh", []string{"-c", b.String()}, nil)
	saw, r, acc := h.probe(t, "prober", out)
	if r.Sandbox != sandbox.Namespace {
		if noNamespace(r.Sandbox) {
			t.Skipf("this system refuses seats a mount namespace: %s", r.Sandbox)
		}
		t.Fatalf("ps says the seat is %q, want %s", r.Sandbox, sandbox.Namespace)
	}
	for _, what := range []string{"keeper-sock", "keeper-record", "persona", "custody", "inventory", "ready", "request", "keep-request"} {
		if !strings.Contains(saw, "DENY "+what+"\n") {
			t.Errorf("the seat reached %s:\n%s", what, saw)
		}
	}
	// The paths are real: the manager's side sees each of them.
	for _, p := range []string{filepath.Join(kdir, "sock"), filepath.Join(kdir, "persona.json"), filepath.Join(control, "inventory.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is not there to be reached: %v", p, err)
		}
	}
	for _, f := range []string{"preserve-state", "keep-seats"} {
		if _, err := os.Stat(filepath.Join(control, f)); !os.IsNotExist(err) {
			t.Errorf("a stop request %s is there after the seat tried to write it: %v", f, err)
		}
	}

	// Its credential, raw: no JetStream API, so no consumer's position.
	creds := filepath.Join(h.launchDir(acc), "seat.creds")
	id, err := broker.ReadCredsIdentity(creds)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(h.m.Broker().URL(), nats.UserCredentials(creds), nats.CustomInboxPrefix(id.InboxPrefix()),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	subj := "$JS.API.CONSUMER.INFO." + wire.DMStream(space) + "." + wire.DMConsumer(wire.Principal{Owner: "local", Actor: other.Name}, other.UID)
	if msg, err := nc.Request(subj, nil, 2*time.Second); err == nil {
		t.Fatalf("a seat's credential read another seat's DM consumer: %s", msg.Data)
	}
}
