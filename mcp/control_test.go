package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mcp"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	seatclient "github.com/cotal-go/cotal/seat/client"
)

// mintCaps mints an agent with capabilities and writes its creds file.
func (h *meshH) mintCaps(name string, caps ...string) string {
	h.t.Helper()
	id := broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: name}, AllowPublish: []string{}, Capabilities: caps}
	cr, _, err := issue.Mint(ctxT(h.t), h.paths, id, h.op)
	if err != nil {
		h.t.Fatal(err)
	}
	path := filepath.Join(h.t.TempDir(), name+".creds")
	if err := broker.WriteCreds(path, cr); err != nil {
		h.t.Fatal(err)
	}
	return path
}

// writePersona writes an agent file into the mesh's project.
func (h *meshH) writePersona(name, front, body string) {
	h.t.Helper()
	dir := config.AgentsDir(h.project)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte("---\nname: "+name+"\n"+front+"---\n"+body), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// TestConformanceMCPSpawnDespawnAndPersonas: the tool surface the
// reference agents manage peers with (messaging §13): a persona with the
// spawn capability lists the personas (never their prompts, environments
// or commands), spawns a seat and follows it up, and stops it; an agent
// without the capability is told what its persona lacks, and another
// spawner may not stop a seat it did not spawn. These tools were missing.
func TestConformanceMCPSpawnDespawnAndPersonas(t *testing.T) {
	h := startMesh(t)
	h.writePersona("shell", "role: worker\ndescription: a shell to run things in\nagent: command\ncommand: sh\nenv: {TOKEN: s3cret-env}\n", "SECRET-PROMPT-BODY\n")
	boss := standalone(t, h, h.mintCaps("boss", broker.CapSpawn))
	boss.waitOK("cotal_orientation", nil, "You are boss")

	got := boss.ok("cotal_personas", nil)
	if !strings.Contains(got, "- shell/worker (command): a shell to run things in") {
		t.Errorf("cotal_personas:\n%s", got)
	}
	// The persona's file lists nothing: its credential joins, reads and
	// posts nothing, and the spawner is told so, not "every channel".
	if !strings.Contains(got, "joins none; reads none; posts none") {
		t.Errorf("cotal_personas says other rights than the credential's:\n%s", got)
	}
	for _, secret := range []string{"SECRET-PROMPT-BODY", "s3cret-env", "sh\n"} {
		if strings.Contains(got, secret) {
			t.Errorf("cotal_personas shows %q:\n%s", secret, got)
		}
	}
	if got := boss.refused("cotal_personas", map[string]any{"name": "nosuch"}); !strings.Contains(got, `no such persona "nosuch"`) {
		t.Errorf("an unknown persona: %s", got)
	}
	if got := boss.refused("cotal_spawn", map[string]any{"name": "../shell"}); !strings.Contains(got, "no path") {
		t.Errorf("a persona named by a path: %s", got)
	}

	got = boss.ok("cotal_spawn", map[string]any{"name": "shell"})
	if !strings.HasPrefix(got, "Spawning shell (persona shell, id local.shell) on manager ") || !strings.Contains(got, "It is up and on the mesh") {
		t.Fatalf("cotal_spawn: %s", got)
	}
	boss.waitOK("cotal_roster", nil, "shell")
	if got := boss.ok("cotal_spawn", map[string]any{"name": "shell"}); !strings.HasPrefix(got, "Spawning shell_2 ") {
		t.Errorf("a second spawn of the persona: %s", got)
	}

	plain := standalone(t, h, h.mintCaps("plain"))
	plain.waitOK("cotal_orientation", nil, "You are plain")
	for _, call := range []struct {
		tool string
		args map[string]any
		verb string
	}{
		{"cotal_spawn", map[string]any{"name": "shell"}, "spawn"},
		{"cotal_personas", nil, "list personas"},
		{"cotal_despawn", map[string]any{"name": "shell"}, "despawn"},
	} {
		want := "This session isn't allowed to " + call.verb + ": its persona needs capabilities: [spawn]"
		if got := plain.refused(call.tool, call.args); !strings.HasPrefix(got, want) {
			t.Errorf("%s without the capability: %s", call.tool, got)
		}
	}
	rival := standalone(t, h, h.mintCaps("rival", broker.CapSpawn))
	rival.waitOK("cotal_orientation", nil, "You are rival")
	if got := rival.refused("cotal_despawn", map[string]any{"name": "shell"}); !strings.Contains(got, "did not spawn seat shell") {
		t.Errorf("another spawner's despawn: %s", got)
	}
	if got := boss.refused("cotal_despawn", map[string]any{"name": "nosuch"}); !strings.Contains(got, `no seat "nosuch"`) {
		t.Errorf("despawn of no seat: %s", got)
	}
	if got := boss.ok("cotal_despawn", map[string]any{"name": "shell", "graceful": false}); !strings.HasPrefix(got, "Stopped shell (killed SIGKILL); it is offline.") {
		t.Errorf("the spawner's despawn: %s", got)
	}
	boss.waitOK("cotal_roster", nil, "shell_2")
	boss.ok("cotal_despawn", map[string]any{"name": "shell_2", "graceful": false})
}

// TestConformanceMCPDocs: cotal_docs serves the pages an agent reads on
// demand, mesh or no mesh: the list, one page, a search, and a refusal of
// a page that does not exist naming those that do.
func TestConformanceMCPDocs(t *testing.T) {
	c := serve(t, mcp.Options{
		Dial: func(context.Context) (*mesh.Endpoint, error) { return nil, errors.New("no mesh here") },
		Self: mcp.Identity{ID: "local.alice", Name: "alice", Space: space},
	})
	if got := c.ok("cotal_docs", nil); !strings.Contains(got, "- channels: Channels") || !strings.Contains(got, "- spawning: Spawning seats") {
		t.Errorf("the list of pages:\n%s", got)
	}
	if got := c.ok("cotal_docs", map[string]any{"page": "attention"}); !strings.HasPrefix(got, "# Attention") || !strings.Contains(got, "| @mention of you | now | now | now |") {
		t.Errorf("the attention page:\n%s", got)
	}
	if got := c.ok("cotal_docs", map[string]any{"query": "family durable"}); !strings.Contains(got, "[channels] ") || !strings.Contains(got, "team.>") {
		t.Errorf("a search:\n%s", got)
	}
	if got := c.refused("cotal_docs", map[string]any{"page": "nosuch"}); !strings.Contains(got, "the pages are: attention, channels, control, messaging, spawning") {
		t.Errorf("an unknown page: %s", got)
	}
}

// TestConformanceMCPDespawnWithoutNameStopsTheOwnSeat: cotal_despawn with
// no name is the caller's own seat (messaging §13): inside a seat the
// manager answers, then stops it; outside any seat there is nothing to
// stop, and it says so.
func TestConformanceMCPDespawnWithoutNameStopsTheOwnSeat(t *testing.T) {
	h := startMesh(t)
	env := h.seatEnv("worker", "")
	name, iid := env["COTAL_NAME"], env["COTAL_MANAGER_INSTANCE"]
	c := serve(t, mcp.Options{Manager: iid, Dial: func(ctx context.Context) (*mesh.Endpoint, error) {
		return mesh.Connect(ctx, mesh.Options{URL: env["COTAL_URL"], Creds: env["COTAL_CREDS"], OneShot: true, Subscribe: []string{}})
	}})
	c.waitOK("cotal_orientation", nil, "You are "+name)
	if got := c.ok("cotal_despawn", map[string]any{"graceful": false}); got != "Stopping your seat "+name+" now: this session ends." {
		t.Fatalf("despawn of the own seat: %q", got)
	}
	op, err := broker.ReadCredsIdentity(h.paths.OperatorCreds())
	if err != nil {
		t.Fatal(err)
	}
	oc, err := ep.NewClient(h.op, ep.ClientOptions{Space: space, Caller: proto.Caller{Owner: op.Principal.Owner, Actor: op.Principal.Actor, UID: op.UID}})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() error {
		row, err := seatclient.New(oc).Inspect(ctxT(t), seatclient.Seat{Name: name, Manager: iid})
		if err != nil {
			return err
		}
		if row.Running() {
			return fmt.Errorf("seat %s still %s", name, row.Process)
		}
		return nil
	})

	alone := standalone(t, h, h.mintCaps("alone"))
	alone.waitOK("cotal_orientation", nil, "You are alone")
	if got := alone.refused("cotal_despawn", nil); !strings.HasPrefix(got, "Couldn't despawn yourself: you are not a seat") {
		t.Errorf("despawn of the own seat outside a seat: %s", got)
	}
}
