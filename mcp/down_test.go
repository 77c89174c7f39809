package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mcp"
	"github.com/cotal-go/cotal/mesh"
)

// With no mesh to reach, the server still starts; tools that need the mesh
// are refused with the reason, and the orientation says what it knows.
func TestToolsRefuseClearlyWhileTheMeshIsDown(t *testing.T) {
	down := errors.New("mesh is not running for space mcptest (start it with `cotal up --detach --space mcptest`, or pass --server)")
	c := serve(t, mcp.Options{
		Dial: func(context.Context) (*mesh.Endpoint, error) { return nil, down },
		Self: mcp.Identity{ID: "local.alice", Name: "alice", Space: "mcptest"},
	})
	want := "Not connected to the mesh: " + down.Error() + ". It keeps trying"
	for _, tool := range []string{"cotal_roster", "cotal_inbox", "cotal_channels"} {
		if got := c.refused(tool, nil); !strings.HasPrefix(got, want) {
			t.Errorf("%s:\n got %q\nwant %q...", tool, got, want)
		}
	}
	if got := c.refused("cotal_dm", map[string]any{"to": "bob", "text": "x"}); !strings.HasPrefix(got, want) {
		t.Errorf("cotal_dm: %q", got)
	}
	got := c.ok("cotal_orientation", nil)
	if !strings.HasPrefix(got, "Not connected to the mesh: mesh is not running") || !strings.Contains(got, `You are alice (id local.alice) in space "mcptest", as your credential says.`) {
		t.Errorf("orientation while down:\n%s", got)
	}
	var cs mcp.ConnectionStatus
	if err := json.Unmarshal([]byte(c.ok("cotal_connection_status", nil)), &cs); err != nil {
		t.Fatal(err)
	}
	if cs.State != mcp.StateConnecting || cs.LastError != down.Error() || cs.Dials == 0 {
		t.Errorf("connection status while down: %+v", cs)
	}
}

// A mesh that goes away mid-session makes tool calls refuse at once, not
// hang; once the mesh is back (on a new port) the server dials it again.
func TestMeshGoneAndBack(t *testing.T) {
	h := startMesh(t)
	aliceCreds := h.mint("alice", "", []string{"team"}, []string{"team"})
	h.mint("bob", "", nil, nil)
	var mu sync.Mutex
	url := h.url()
	c := serve(t, mcp.Options{Dial: func(ctx context.Context) (*mesh.Endpoint, error) {
		mu.Lock()
		u := url
		mu.Unlock()
		return mesh.Connect(ctx, mesh.Options{URL: u, Creds: aliceCreds})
	}})
	c.waitOK("cotal_roster", nil, "alice (you)")

	if err := h.m.Close(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := c.waitText("cotal_connection_status", nil, holding(`"state": "disconnected"`))
	if text := c.refused("cotal_dm", map[string]any{"to": "bob", "text": "x"}); !strings.HasPrefix(text, "Not connected to the mesh") {
		t.Errorf("cotal_dm with the mesh gone: %q\nstatus: %s", text, got)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the refusal took %s", d)
	}

	m, err := host.Start(ctxT(t), host.Config{Paths: h.paths, ProjectDir: h.project})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	mu.Lock()
	url = m.Broker().URL()
	mu.Unlock()
	testutil.WaitFor(t, 20*time.Second, func() error {
		text, isErr := c.call("cotal_dm", map[string]any{"to": "bob", "text": "after the restart"})
		if isErr {
			return fmt.Errorf("cotal_dm: %s", text)
		}
		return nil
	})
}
