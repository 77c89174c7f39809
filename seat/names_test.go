package seat_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// TestSpawnRefusesNamesThatAreNotFree: no spawner, the operator included,
// may give a seat the operator's name (any case), a name of the mesh's own
// services, or a name held under another profile. Before, a spawner's
// seat named after the operator replaced the operator's identity record,
// and every operator command failed.
func TestSpawnRefusesNamesThatAreNotFree(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	if _, _, err := issue.Mint(ctxT(t), h.paths, broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: "watcher"}, Profile: wire.ProfileObserver}, h.op); err != nil {
		t.Fatal(err)
	}
	spawner := h.agentClient("spawner", broker.CapSpawn)
	op := h.caller.Actor
	for _, name := range []string{op, strings.ToUpper(op), "cotal_delivery", "cotal_manager", "Cotal_Mesh", "cotal", "delivery", "Manager", "watcher", "Watcher"} {
		for who, c := range map[string]*ep.Client{"operator": h.c, "spawner": spawner} {
			t.Run(who+"/"+name, func(t *testing.T) {
				_, err := spawn(t, c, h.iid, client.SpawnArgs{Persona: "shell", Name: name})
				e := errCode(t, err)
				if e.Code != proto.CodePermissionDenied || e.EffectiveOutcome() != proto.NotExecuted {
					t.Fatalf("spawn named %q: %v (%s), want permission-denied, not executed", name, e, e.EffectiveOutcome())
				}
			})
		}
	}
	// A persona named like a service is refused even unpinned (numbering
	// would never find a free cotal_* name).
	h.persona("cotal_shell", "sh", nil, nil)
	if _, err := spawn(t, h.c, h.iid, client.SpawnArgs{Persona: "cotal_shell"}); errCode(t, err).Code != proto.CodePermissionDenied {
		t.Fatalf("persona cotal_shell: %v", err)
	}
	// The operator's record is still the operator's: its commands work.
	if cs := ps(t, h.c, h.iid); len(seatNames(cs)) != 0 {
		t.Fatalf("seats after the refused spawns: %v", seatNames(cs))
	}
	rec, found, err := broker.LookupIdentity(ctxT(t), mustJS(t, h), space, wire.Principal{Owner: "local", Actor: op})
	if err != nil || !found || rec.Profile != wire.ProfileOperator || rec.LifecycleUID != h.caller.UID {
		t.Fatalf("the operator's record after the refused spawns: %+v found=%v %v", rec, found, err)
	}
	// An unpinned persona named after the operator gets a numbered name.
	h.persona(op, "sh", nil, nil)
	acc := mustSpawn(t, spawner, h.iid, client.SpawnArgs{Persona: op})
	if acc.Name == op || !strings.HasPrefix(acc.Name, op+"_") {
		t.Fatalf("persona %s spawned as %q", op, acc.Name)
	}
	if res := goal(t, spawner, h.iid, acc.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
		t.Fatalf("spawn of persona %s: %s %+v", op, res.State, res.Error)
	}
}

// TestSpawnerCannotChooseItsSeatsRole: a seat's role comes from its
// persona; a spawner may give another only when its own capabilities name
// that role, and the operator may give any. Before, a spawner gave its
// seats any role and they took that role's tasks.
func TestSpawnerCannotChooseItsSeatsRole(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	dir := config.AgentsDir(h.project)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "builder.md"), []byte("---\nname: builder\nagent: command\ncommand: sh\nrole: builder\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := h.agentClient("spawner", broker.CapSpawn)
	_, err := spawn(t, plain, h.iid, client.SpawnArgs{Persona: "builder", Role: "reviewer"})
	if e := errCode(t, err); e.Code != proto.CodePermissionDenied || !strings.Contains(e.Message, "reviewer") {
		t.Fatalf("a spawner without role:reviewer giving role reviewer: %v", e)
	}
	for _, c := range []struct {
		who    string
		client *ep.Client
		role   string
	}{
		{"persona's role", plain, ""},
		{"same as the persona's", plain, "builder"},
		{"a role the spawner holds", h.agentClient("lead", broker.CapSpawn, "role:reviewer"), "reviewer"},
		{"the operator's choice", h.c, "auditor"},
	} {
		t.Run(c.who, func(t *testing.T) {
			acc := mustSpawn(t, c.client, h.iid, client.SpawnArgs{Persona: "builder", Role: c.role})
			want := c.role
			if want == "" {
				want = "builder"
			}
			if res := goal(t, c.client, h.iid, acc.GoalID, 10*time.Second); res.State != ep.GoalSucceeded {
				t.Fatalf("spawn: %s %+v", res.State, res.Error)
			}
			r, ok := row(ps(t, h.c, h.iid), acc.Name)
			if !ok || r.Role != want {
				t.Fatalf("seat %s serves %q, want %q", acc.Name, r.Role, want)
			}
			rec, _, err := broker.LookupIdentity(ctxT(t), mustJS(t, h), space, wire.Principal{Owner: "local", Actor: acc.Name})
			if err != nil || rec.Role != want {
				t.Fatal(fmt.Errorf("identity record of %s: role %q, %v", acc.Name, rec.Role, err))
			}
		})
	}
}

func mustJS(t testing.TB, h *harness) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(h.op)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
