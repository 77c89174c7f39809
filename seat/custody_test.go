package seat_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/procid"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/keeper"
)

// restart closes the harness's mesh, keeping the seats in their keepers
// when keep is set, and starts a mesh on the same store and project, the
// harness then talking to it.
func (h *harness) restart(keep bool) { h.restartAfter(keep, nil) }

// restartAfter is restart with between run while no mesh runs.
func (h *harness) restartAfter(keep bool, between func()) {
	h.t.Helper()
	if keep {
		h.m.KeepSeatsOnClose()
	}
	if err := h.m.Close(); err != nil {
		h.t.Fatal(err)
	}
	if between != nil {
		between()
	}
	m, err := host.Start(ctxT(h.t), host.Config{Paths: h.paths, ProjectDir: h.project})
	if err != nil {
		h.t.Fatal(err)
	}
	h.m = m
	h.t.Cleanup(func() { _ = m.Close() })
	h.op = h.conn("operator")
	h.c = h.client(h.op, h.caller)
	if got := m.Manager().InstanceID(); got != h.iid {
		h.t.Fatalf("the restarted manager is instance %s, was %s", got, h.iid)
	}
	h.t.Cleanup(func() { h.killSeats(h.iid) })
}

// keeperOf is the record of the keeper holding a seat.
func (h *harness) keeperOf(name, uid string) keeper.Record {
	h.t.Helper()
	rec, _, err := keeper.ReadRecord(keeper.Dir(issue.RunDir(h.paths), name, uid))
	if err != nil {
		h.t.Fatalf("keeper of %s: %v", name, err)
	}
	return rec
}

func waitRow(t *testing.T, h *harness, name string, ok func(client.Row) error) client.Row {
	t.Helper()
	var r client.Row
	waitFor(t, 15*time.Second, func() error {
		var found bool
		if r, found = row(ps(t, h.c, h.iid), name); !found {
			return fmt.Errorf("no row for %s", name)
		}
		return ok(r)
	})
	return r
}

// A seat outlives the manager that let go of it: its keeper holds it, and
// the next manager of the instance takes it back, same lifecycle, with
// its screen (including what it wrote while no manager ran), input and
// ps as before.
func TestSeatsOutliveTheirManager(t *testing.T) {
	h := startMesh(t, 10*time.Second)
	h.persona("shell", "sh", []string{"-i"}, map[string]string{"PS1": "$ "})
	acc := h.ready("shell")
	before := waitRow(t, h, "shell", func(r client.Row) error {
		if r.Custody != seat.CustodyKeeper {
			return fmt.Errorf("custody %q, want keeper", r.Custody)
		}
		return nil
	})
	trigger := filepath.Join(t.TempDir(), "go")
	input(t, h.c, h.iid, "shell", fmt.Sprintf("echo before-$((1+1)); while [ ! -e %s ]; do sleep 0.01; done; echo during-$((2+2))", trigger))
	waitScreen(t, h.c, h.iid, "shell", "before-2", 10*time.Second)
	kept := h.keeperOf("shell", acc.UID)

	h.restart(true)
	// The seat ran on while no manager held it, and wrote meanwhile.
	// (The new manager is up already: the output comes after it took the
	// seat back unless the trigger is pulled before; both are fine, the
	// screen must show it either way.)
	if !kept.Seat.Alive() || !kept.Keeper.Alive() {
		t.Fatalf("seat %v or keeper %v did not survive the manager", kept.Seat, kept.Keeper)
	}
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := waitRow(t, h, "shell", func(r client.Row) error {
		if !r.Running() || r.ReattachedMs == 0 {
			return fmt.Errorf("row %+v, want running and reattached", r)
		}
		return nil
	})
	if r.LifecycleUID != acc.UID || r.PID != before.PID || r.Mesh != "idle" && r.Mesh != "working" {
		t.Errorf("reattached row uid %s pid %d mesh %s; want uid %s pid %d on the mesh", r.LifecycleUID, r.PID, r.Mesh, acc.UID, before.PID)
	}
	waitScreen(t, h.c, h.iid, "shell", "during-4", 10*time.Second)
	if scr := screen(t, h.c, h.iid, "shell").Screen; !strings.Contains(scr, "before-2") {
		t.Errorf("the screen taken back lost what was drawn before:\n%s", scr)
	}
	input(t, h.c, h.iid, "shell", "echo after-$((3+3))")
	waitScreen(t, h.c, h.iid, "shell", "after-6", 10*time.Second)
	if !issue.Held(h.paths, wire.Principal{Owner: "local", Actor: "shell"}) {
		t.Error("the seat's credential was revoked across the restart")
	}

	// A stop of the taken-back seat ends it and its keeper for good.
	if _, err := mgr(h.c).Stop(ctxT(t), client.Seat{Name: "shell", Manager: h.iid}, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, keeper.FinishWait+5*time.Second, func() error {
		if kept.Keeper.Alive() || kept.Seat.Alive() {
			return errors.New("the keeper or the seat outlives its stop")
		}
		if _, err := os.Stat(keeper.Dir(issue.RunDir(h.paths), "shell", acc.UID)); !os.IsNotExist(err) {
			return fmt.Errorf("the keeper directory is left (%v)", err)
		}
		return nil
	})
}

// A manager closed without keeping stops its seats, keepers and all.
func TestCloseStopsKeptSeats(t *testing.T) {
	h := startMesh(t, 10*time.Second)
	h.persona("shell", "sh", nil, nil)
	acc := h.ready("shell")
	kept := h.keeperOf("shell", acc.UID)
	h.restart(false)
	if kept.Seat.Alive() {
		t.Errorf("seat %v alive after a close that stops seats", kept.Seat)
	}
	// The keeper goes once the manager has heard how the seat ended and
	// hung up; at the latest FinishWait after the seat.
	waitFor(t, keeper.FinishWait+5*time.Second, func() error {
		if kept.Keeper.Alive() {
			return fmt.Errorf("keeper %v outlives the seat it held", kept.Keeper)
		}
		return nil
	})
	if r, ok := row(ps(t, h.c, h.iid), "shell"); ok {
		t.Errorf("the next manager lists a stopped seat: %+v", r)
	}
}

// A keeper killed while its manager holds the seat loses the seat: ps
// says lost, since when and why, what was left of it is ended by its
// recorded identity, and its credential is revoked.
func TestKilledKeeperLosesTheSeat(t *testing.T) {
	h := startMesh(t, 10*time.Second)
	h.persona("shell", "sh", []string{"-c", `trap '' HUP; sleep 1000 & echo up; while :; do sleep 1; done`}, nil)
	acc := h.ready("shell")
	kept := h.keeperOf("shell", acc.UID)
	if err := kept.Keeper.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := waitRow(t, h, "shell", func(r client.Row) error {
		if r.State != seat.StateLost || r.Process != client.ProcessLost || r.LostMs == 0 || !strings.Contains(r.Lost, "keeper") {
			return fmt.Errorf("row %+v, want lost", r)
		}
		return nil
	})
	if r.Running() {
		t.Error("a lost seat reads running")
	}
	waitFor(t, 10*time.Second, func() error {
		if kept.Seat.Alive() {
			return fmt.Errorf("the lost seat %v still runs", kept.Seat)
		}
		if left := procid.Session(kept.Seat.PID); len(left) > 0 {
			return fmt.Errorf("its session still has %v", left)
		}
		return nil
	})
	if issue.Held(h.paths, wire.Principal{Owner: "local", Actor: "shell"}) {
		t.Error("the lost seat's credential is still held")
	}
}

// A keeper killed while no manager ran is found lost at the next start,
// with when; the seat it held is ended.
func TestSeatLostWhileNoManagerRan(t *testing.T) {
	h := startMesh(t, 10*time.Second)
	h.persona("shell", "sh", []string{"-c", `trap '' HUP; echo up; while :; do sleep 1; done`}, nil)
	acc := h.ready("shell")
	kept := h.keeperOf("shell", acc.UID)
	var killed time.Time
	h.restartAfter(true, func() {
		killed = time.Now()
		if err := kept.Keeper.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, func() error {
			if kept.Keeper.Alive() {
				return errors.New("keeper alive")
			}
			return nil
		})
	})
	m := h.m
	rep := m.Manager().CustodyReport()
	if len(rep.Lost) != 1 || rep.Lost[0].Name != "shell" || rep.Lost[0].At.After(killed) || !strings.Contains(rep.Lost[0].Why, "died") {
		t.Fatalf("custody report %+v; want shell lost, last seen before the kill", rep)
	}
	r := waitRow(t, h, "shell", func(r client.Row) error {
		if r.State != seat.StateLost || r.Process != client.ProcessLost {
			return fmt.Errorf("row %+v, want lost", r)
		}
		return nil
	})
	if r.LostMs == 0 || r.LostMs > killed.UnixMilli() || r.Lost != rep.Lost[0].Why {
		t.Errorf("lost row at %d (%q); want when it was last seen, before %d", r.LostMs, r.Lost, killed.UnixMilli())
	}
	if kept.Seat.Alive() {
		t.Error("the orphaned seat still runs")
	}
	if issue.Held(h.paths, wire.Principal{Owner: "local", Actor: "shell"}) {
		t.Error("the lost seat's credential is still held")
	}
}

// A kept seat whose persona names no directory starts in the manager's,
// as a seat the manager held itself would, not in its keeper's.
func TestKeptSeatStartsInTheManagersDirectory(t *testing.T) {
	h := startMesh(t, 10*time.Second)
	h.persona("where", "sh", []string{"-c", "echo at=$(pwd); while :; do sleep 1; done"}, nil)
	h.ready("where")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	waitScreen(t, h.c, h.iid, "where", "at="+wd, 10*time.Second)
}
