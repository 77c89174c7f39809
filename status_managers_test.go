package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
)

// TestConformanceSeedStatusScattersAndSaysWhichManagersAnswered: the
// control-surface page: status is a scatter over every registered
// instance, with the liveness probe ps uses, and a silent instance is
// labelled, never counted as if it answered. Status counted registrations
// ("managers 2 registered" with one of them dead).
func TestConformanceSeedStatusScattersAndSaysWhichManagersAnswered(t *testing.T) {
	c := newCLI(t, "statusm")
	ctx := context.Background()
	h, err := host.Start(ctx, host.Config{Paths: c.paths, ProjectDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	live := h.Manager().InstanceID()

	// A second manager that crashes: its registration stays behind.
	nc, err := h.Broker().Connect("crashing manager")
	if err != nil {
		t.Fatal(err)
	}
	dead, err := seat.New(seat.Options{
		Space: c.paths.Space, URL: h.Broker().URL(), Conn: nc,
		Identity:     ep.Identity{Principal: wire.Principal{Owner: "local", Actor: "cotal_manager"}, UID: wire.NewLifecycleUID()},
		InstanceFile: filepath.Join(t.TempDir(), "dead.id"), ProjectDir: t.TempDir(),
		Minter: issue.NewSeatMinter(c.paths, nc, false),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := dead.Start(testmesh.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dead.Close() })
	nc.Close()

	out, errOut, code := c.run("status", "--json")
	var r host.Status
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("status --json: exit %d\n%s%s", code, out, errOut)
	}
	if r.Managers != 1 || len(r.ManagerInstances) != 2 {
		t.Fatalf("managers %d answered of %+v; want 1 of 2", r.Managers, r.ManagerInstances)
	}
	for _, m := range r.ManagerInstances {
		switch m.InstanceID {
		case live:
			if !m.Answered || m.Epoch == 0 {
				t.Errorf("the live manager: %+v, want answered with its epoch", m)
			}
		case dead.InstanceID():
			if m.Answered || m.Liveness != ep.Gone {
				t.Errorf("the crashed manager: %+v, want no answer, probed gone", m)
			}
		default:
			t.Errorf("an unknown manager %+v", m)
		}
	}
	out, _, _ = c.run("status")
	for _, want := range []string{"managers   1 of 2 registered answered", live + " epoch ", dead.InstanceID() + ": registration is stale"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}
