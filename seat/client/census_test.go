package client_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat/client"
)

// byManager is "name@manager" of each row, in census order.
func byManager(cs *client.Census) []string {
	var out []string
	for _, r := range cs.Rows {
		out = append(out, r.Name+"@"+r.Manager)
	}
	return out
}

// TestCensusAttributesEachRowToItsManager: a census over two managers
// lists every seat once, under the manager that runs it, sorted by name;
// pinned to one manager it lists only that one's.
func TestCensusAttributesEachRowToItsManager(t *testing.T) {
	h := startMesh(t, host.Config{})
	h.persona("shell", "sh")
	b, _ := h.extraManager("b")
	bid := b.InstanceID()
	h.up(h.c, "shell", "zed", h.iid)
	h.up(h.c, "shell", "amy", bid)

	cs, err := h.c.Census(ctxT(t), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"amy@" + bid, "zed@" + h.iid}
	if got := byManager(cs); !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	managers := []string{h.iid, bid}
	slices.Sort(managers)
	if !slices.Equal(cs.Managers, managers) || cs.Incomplete() || len(cs.Missing) != 0 {
		t.Fatalf("managers %v missing %+v complete %v, want %v and complete", cs.Managers, cs.Missing, cs.Complete, managers)
	}
	for _, r := range cs.Rows {
		if r.ManagerNowMs == 0 || !r.Running() || r.PID == 0 {
			t.Fatalf("row %+v: want a running seat read against its manager's clock", r)
		}
	}

	pinned, err := h.c.Census(ctxT(t), bid)
	if err != nil {
		t.Fatal(err)
	}
	if got := byManager(pinned); !slices.Equal(got, []string{"amy@" + bid}) || !slices.Equal(pinned.Managers, []string{bid}) || pinned.Incomplete() {
		t.Fatalf("census pinned to %s: rows %v managers %v incomplete %v", bid, got, pinned.Managers, pinned.Incomplete())
	}
}

// TestCensusNamesAManagerThatDoesNotAnswer: a manager that crashed (its
// connection gone, its registration left) is named missing, the census is
// incomplete, and the live manager's seats are still listed.
func TestCensusNamesAManagerThatDoesNotAnswer(t *testing.T) {
	h := startMesh(t, host.Config{})
	h.persona("shell", "sh")
	b, bnc := h.extraManager("b")
	h.up(h.c, "shell", "left", h.iid)
	h.up(h.c, "shell", "right", b.InstanceID())

	bnc.Close()
	cs, err := h.c.Census(ctxT(t), "")
	if err != nil {
		t.Fatal(err)
	}
	if !cs.Incomplete() || len(cs.Missing) != 1 || cs.Missing[0].InstanceID != b.InstanceID() || cs.Missing[0].Liveness != ep.Gone {
		t.Fatalf("census with a crashed manager: missing %+v incomplete %v, want %s probed gone", cs.Missing, cs.Incomplete(), b.InstanceID())
	}
	if got := byManager(cs); !slices.Equal(got, []string{"left@" + h.iid}) || !slices.Equal(cs.Managers, []string{h.iid}) {
		t.Fatalf("the live manager's part: rows %v managers %v", got, cs.Managers)
	}
	// Its seats still run in this process, unseen: Close stops them.
	if live := b.Live(); !slices.Equal(live, []string{"right"}) {
		t.Fatalf("the crashed manager's seats: %v", live)
	}
}

// TestFindPrefersARunningSeat: a name is reused once its seat exited, so
// the running seat of a name wins over an exited one wherever it sorts;
// between two exited ones the first is taken.
func TestFindPrefersARunningSeat(t *testing.T) {
	row := func(manager, process string) client.CensusRow {
		return client.CensusRow{Manager: manager, Row: client.Row{Name: "dup", Process: process}}
	}
	other := client.CensusRow{Manager: "m0", Row: client.Row{Name: "other", Process: "running"}}
	for _, tc := range []struct {
		name string
		rows []client.CensusRow
		want string // manager of the row found; "" none
	}{
		{"running after exited", []client.CensusRow{row("m1", "exited 0"), row("m2", "running")}, "m2"},
		{"running before exited", []client.CensusRow{row("m1", "running"), row("m2", "killed SIGKILL")}, "m1"},
		{"only exited", []client.CensusRow{row("m1", "exited 1"), row("m2", "exited 2")}, "m1"},
		{"never started", []client.CensusRow{row("m1", "")}, "m1"},
		{"none of the name", []client.CensusRow{other}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := &client.Census{Rows: tc.rows}
			r, ok := cs.Find("dup")
			if got := map[bool]string{true: r.Manager, false: ""}[ok]; got != tc.want {
				t.Fatalf("found on %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLocateTakesTheRunningSeatOverAnExitedOne: a seat that exited on one
// manager and the running seat that took its name on another: Locate finds
// the running one, whichever manager sorts first; pinned to the first
// manager it finds the exited one; an unknown name is a NoSeatError naming
// the seats.
func TestLocateTakesTheRunningSeatOverAnExitedOne(t *testing.T) {
	h := startMesh(t, host.Config{})
	h.persona("shell", "sh")
	b, _ := h.extraManager("b")
	rounds := []struct{ name, first, second string }{
		{"dup_a", h.iid, b.InstanceID()},
		{"dup_b", b.InstanceID(), h.iid},
	}
	for _, r := range rounds {
		gone := h.up(h.c, "shell", r.name, r.first)
		if _, err := h.c.Stop(ctxT(t), gone.Owned(), false); err != nil {
			t.Fatalf("stopping %s: %v", r.name, err)
		}
		// Its credential is retired on exit: the name is free again.
		var live client.Spawned
		waitFor(t, 10*time.Second, func() error {
			sp, err := h.c.Spawn(ctxT(t), client.SpawnArgs{Persona: "shell", Name: r.name}, r.second)
			live = sp
			return err
		})
		if res, err := h.c.AwaitSpawn(ctxT(t), live, client.Watch{}); err != nil || res.State != ep.GoalSucceeded {
			t.Fatalf("second %s: %s (%v)", r.name, res.State, err)
		}
		got, err := h.c.Locate(ctxT(t), r.name, "")
		if err != nil {
			t.Fatal(err)
		}
		if got.Manager != r.second || !got.Running() || got.LifecycleUID != live.UID {
			t.Fatalf("located %s on %s (%s, uid %s), want the running one on %s (uid %s)", r.name, got.Manager, got.Process, got.LifecycleUID, r.second, live.UID)
		}
		old, err := h.c.Locate(ctxT(t), r.name, r.first)
		if err != nil {
			t.Fatal(err)
		}
		if old.Manager != r.first || old.Running() || old.LifecycleUID != gone.UID {
			t.Fatalf("located %s pinned to %s: %+v, want the exited one", r.name, r.first, old)
		}
	}

	_, err := h.c.Locate(ctxT(t), "nobody", "")
	var none *client.NoSeatError
	if !errors.As(err, &none) || none.Name != "nobody" || !slices.Equal(none.Seats, []string{"dup_a", "dup_a", "dup_b", "dup_b"}) {
		t.Fatalf("locating an unknown seat: %v", err)
	}
}

// TestNoManagerMeansNoSeats: a mesh serving no manager refuses the census
// as IsNoManager; what runs there is nothing, and stopping everything
// stops nothing.
func TestNoManagerMeansNoSeats(t *testing.T) {
	h := startMesh(t, host.Config{NoManager: true})
	_, err := h.c.Census(ctxT(t), "")
	if !client.IsNoManager(err) {
		t.Fatalf("census without a manager: %v, want a no-manager refusal", err)
	}
	if rows, err := h.c.Running(ctxT(t)); err != nil || rows != nil {
		t.Fatalf("running seats without a manager: %v %v", rows, err)
	}
	if stopped, err := h.c.StopEverySeat(ctxT(t)); err != nil || stopped != nil {
		t.Fatalf("stopping every seat without a manager: %v %v", stopped, err)
	}
}

// TestStopEverySeatStopsThoseOfEveryManager: what `down --with-agents`
// does: every running seat of every manager, named, sorted; exited ones
// are left alone.
func TestStopEverySeatStopsThoseOfEveryManager(t *testing.T) {
	h := startMesh(t, host.Config{})
	h.persona("shell", "sh")
	h.persona("quick", "sh", "-c", "echo bye; exit 3")
	b, _ := h.extraManager("b")
	h.up(h.c, "shell", "one", h.iid)
	h.up(h.c, "shell", "two", b.InstanceID())
	quick, err := h.c.Spawn(ctxT(t), client.SpawnArgs{Persona: "quick"}, b.InstanceID())
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := h.c.AwaitSpawn(ctxT(t), quick, client.Watch{}); res.State != ep.GoalFailed {
		t.Fatalf("quick: %s", res.State)
	}

	stopped, err := h.c.StopEverySeat(ctxT(t))
	if err != nil || !slices.Equal(stopped, []string{"one", "two"}) {
		t.Fatalf("stopped %v (%v), want one and two", stopped, err)
	}
	if rows, err := h.c.Running(ctxT(t)); err != nil || len(rows) != 0 {
		t.Fatalf("running after StopEverySeat: %v %v", rows, err)
	}
}

// TestAPinnedCallAfterARestartSaysSoAndTheNextOneWorks: a manager that
// restarted refuses a call bound to its old epoch (pinned calls are never
// re-issued); the client says the manager restarted, and its next call
// goes to the manager as it is now instead of failing the same way.
func TestAPinnedCallAfterARestartSaysSoAndTheNextOneWorks(t *testing.T) {
	h := startMesh(t, host.Config{})
	file := filepath.Join(t.TempDir(), "again.id")
	first, nc := h.managerAt(file)
	iid := first.InstanceID()
	if _, err := h.c.Census(ctxT(t), iid); err != nil {
		t.Fatal(err)
	}
	_ = first.Close()
	nc.Close()
	second, _ := h.managerAt(file)
	if second.InstanceID() != iid || second.Epoch() == first.Epoch() {
		t.Fatalf("not a restart: %s@%d then %s@%d", iid, first.Epoch(), second.InstanceID(), second.Epoch())
	}
	_, err := h.c.Census(ctxT(t), iid)
	if err == nil || !strings.Contains(err.Error(), "the manager restarted") {
		t.Fatalf("the first call after the restart: %v", err)
	}
	if _, err := h.c.Census(ctxT(t), iid); err != nil {
		t.Fatalf("the next call still fails: %v", err)
	}
}
