package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mcp"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
	seatclient "github.com/cotal-go/cotal/seat/client"
)

// seatEnv spawns a command seat that writes its environment to a file and
// waits, and returns that environment once the seat is on the mesh.
func (h *meshH) seatEnv(persona, front string) map[string]string {
	h.t.Helper()
	out := h.t.TempDir()
	body := fmt.Sprintf("---\nname: %s\nagent: command\ncommand: sh\nargs: [\"-c\", \"env > \\\"$OUT/env.tmp\\\" && mv \\\"$OUT/env.tmp\\\" \\\"$OUT/env\\\"; echo up; exec sleep 600\"]\nenv: {OUT: %q}\n%s---\n", persona, out, front)
	dir := config.AgentsDir(h.project)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, persona+".md"), []byte(body), 0o600); err != nil {
		h.t.Fatal(err)
	}
	// The manager admits only callers the space minted: the mesh's operator.
	op, err := broker.ReadCredsIdentity(h.paths.OperatorCreds())
	if err != nil {
		h.t.Fatal(err)
	}
	c, err := ep.NewClient(h.op, ep.ClientOptions{Space: space, Caller: proto.Caller{Owner: op.Principal.Owner, Actor: op.Principal.Actor, UID: op.UID}})
	if err != nil {
		h.t.Fatal(err)
	}
	iid := h.m.Manager().InstanceID()
	r, err := c.Call(ctxT(h.t), wire.ManagerEndpoint, "spawn", seatclient.SpawnArgs{Persona: persona}, ep.On(iid), ep.Timeout(10*time.Second))
	if err != nil {
		h.t.Fatalf("spawn %s: %v", persona, err)
	}
	var acc seatclient.SpawnAccepted
	if err := json.Unmarshal(r.Data, &acc); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		_, _ = c.Call(context.Background(), wire.ManagerEndpoint, "despawn", map[string]any{"name": acc.Name, "graceful": false}, ep.On(iid), ep.Timeout(10*time.Second))
	})
	testutil.WaitFor(h.t, 15*time.Second, func() error {
		r, err := c.Call(ctxT(h.t), wire.ManagerEndpoint, "inspect", map[string]string{"name": acc.Name}, ep.On(iid))
		if err != nil {
			return err
		}
		var row seatclient.Row
		if err := json.Unmarshal(r.Data, &row); err != nil {
			return err
		}
		if row.State != seat.StateReady {
			return fmt.Errorf("seat %s is %s", acc.Name, row.State)
		}
		return nil
	})
	b, err := os.ReadFile(filepath.Join(out, "env"))
	if err != nil {
		h.t.Fatalf("the seat wrote no environment: %v", err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "COTAL_") {
			env[k] = v
		}
	}
	return env
}

// Inside a seat the server acts through the seat's connector in the
// manager: the inbox it reads is the connector's, modes and attention are
// set there, and what it sends goes out with the seat's own credential.
func TestManagedModeGoesThroughTheSeatsConnector(t *testing.T) {
	h := startMesh(t)
	alice := h.peer(h.mint("alice", "", []string{"team"}, []string{"team"}))
	env := h.seatEnv("worker", "subscribe: [team]\nallowPublish: [team]\n")
	name, creds, iid := env["COTAL_NAME"], env["COTAL_CREDS"], env["COTAL_MANAGER_INSTANCE"]
	if name == "" || creds == "" || iid != h.m.Manager().InstanceID() {
		t.Fatalf("seat environment: %v", env)
	}
	c := serve(t, mcp.Options{Manager: iid, Dial: func(ctx context.Context) (*mesh.Endpoint, error) {
		return mesh.Connect(ctx, mesh.Options{URL: env["COTAL_URL"], Creds: creds, OneShot: true, Subscribe: []string{}})
	}})

	got := c.waitOK("cotal_orientation", nil, "through your seat's connector on manager "+iid)
	if !strings.Contains(got, "You are "+name+" (id local."+name+")") || !strings.Contains(got, "Joined: #team (durable)") {
		t.Errorf("orientation:\n%s", got)
	}
	var cs mcp.ConnectionStatus
	if err := json.Unmarshal([]byte(c.ok("cotal_connection_status", nil)), &cs); err != nil {
		t.Fatal(err)
	}
	if cs.State != mcp.StateReady || cs.Mode != "managed" || cs.Manager != iid || cs.Identity != "local."+name {
		t.Errorf("connection status: %+v", cs)
	}

	// A DM to the seat is read from its connector's inbox, once.
	if _, err := alice.DM(ctxT(t), name, "hi seat"); err != nil {
		t.Fatal(err)
	}
	c.waitOK("cotal_inbox", nil, "[DM from alice] hi seat")
	if got := c.ok("cotal_inbox", nil); got != "Inbox empty, no new messages." {
		t.Errorf("second read: %q", got)
	}
	// A DM from the seat is the seat's.
	if got := c.ok("cotal_dm", map[string]any{"to": "alice", "text": "hi alice"}); !strings.HasPrefix(got, "DM sent to alice.") {
		t.Errorf("cotal_dm: %q", got)
	}
	it := next(t, alice)
	if it.Kind != wire.KindDM || it.Msg.From.ID != "local."+name || it.Msg.Text() != "hi alice" {
		t.Fatalf("alice got %s %q from %s", it.Kind, it.Msg.Text(), it.Msg.From.ID)
	}
	// cotal_send without a channel goes to the connector's first channel.
	if got := c.ok("cotal_send", map[string]any{"text": "on team"}); !strings.HasPrefix(got, "Sent to #team.") {
		t.Errorf("cotal_send: %q", got)
	}
	if it := next(t, alice); it.Subject.Channel != "team" || it.Msg.From.ID != "local."+name {
		t.Fatalf("alice got %s %q from %s, want the seat's post on #team", it.Kind, it.Msg.Text(), it.Msg.From.ID)
	}

	// The mode is the connector's: the manager reports it, and presence
	// mirrors it.
	c.ok("cotal_channel_mode", map[string]any{"channel": "team", "mode": "muted"})
	if got := c.ok("cotal_channels", nil); !strings.Contains(got, "* #team — durable, backstop active; replay on; mode muted") {
		t.Errorf("cotal_channels:\n%s", got)
	}
	c.ok("cotal_status", map[string]any{"attention": "dnd", "activity": "testing"})
	testutil.WaitFor(t, 10*time.Second, func() error {
		peers, _, err := alice.Roster(ctxT(t))
		if err != nil {
			return err
		}
		for _, p := range peers {
			if p.Name == name && p.Record.Attention == presence.DND && p.Record.Activity == "testing" && p.Record.ChannelModes["team"] == "muted" {
				return nil
			}
		}
		return fmt.Errorf("alice's roster does not show %s in dnd, testing, #team muted: %+v", name, peers)
	})
	if got := c.ok("cotal_roster", nil); !strings.Contains(got, name+" (you) — idle") || !strings.Contains(got, "attention dnd · muted #team") {
		t.Errorf("roster:\n%s", got)
	}
	// A post on the muted channel is dropped from the connector's inbox.
	if _, err := alice.Send(ctxT(t), "team", "noise"); err != nil {
		t.Fatal(err)
	}
	c.waitOK("cotal_inbox", nil, "1 post(s) on muted channels dropped.")

	if got := c.ok("cotal_leave", map[string]any{"channel": "team"}); got != "Left #team." {
		t.Errorf("leave: %q", got)
	}
	if got := c.ok("cotal_join", map[string]any{"channel": "team"}); !strings.HasPrefix(got, "Joined #team (durable backstop active)") {
		t.Errorf("join: %q", got)
	}
}
