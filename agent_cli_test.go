package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/internal/testmesh"
	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/mesh/wire"
)

// agentMesh is a running mesh with a manager whose project has a shell
// persona, and the creds of a spawn-capable agent and of a plain one.
func agentMesh(t *testing.T, space string) (c cli, boss, peer string) {
	t.Helper()
	c = newCLI(t, space)
	project := t.TempDir()
	if err := os.MkdirAll(config.AgentsDir(project), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config.AgentsDir(project), "shell.md"), []byte("---\nname: shell\nagent: command\ncommand: sh\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := host.Start(context.Background(), host.Config{Paths: c.paths, ProjectDir: project, Readiness: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	boss, _ = testmesh.Mint(t, h.Broker(), broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: "boss"}, AllowPublish: []string{}, Capabilities: []string{broker.CapSpawn}})
	peer, _ = testmesh.Mint(t, h.Broker(), broker.Identity{Space: space, Principal: wire.Principal{Owner: "local", Actor: "peer"}, AllowPublish: []string{}})
	return c, boss, peer
}

// as runs cotal with args as the identity in creds.
func (c cli) as(creds string, args ...string) (stdout, stderr string, code int) {
	return c.run(append([]string{"--creds", creds}, args...)...)
}

// TestConformanceAnAgentsSeatCommandsGetTheRealAnswer: an agent's stop,
// input, screen and ps send their request and print the broker's or the
// manager's answer: a spawner reads and stops the seat it spawned, is
// told that only the operator may type into a seat, and is refused the
// census by the broker; another agent may not stop it. They failed before
// sending anything: they read the records bucket, which agents may not
// ("registry is unreadable").
func TestConformanceAnAgentsSeatCommandsGetTheRealAnswer(t *testing.T) {
	c, boss, peer := agentMesh(t, "agentcli")
	if out, errOut, code := c.as(boss, "spawn", "shell", "--name", "mine"); code != 0 || !strings.Contains(out, "ready: mine is up") {
		t.Fatalf("spawn as the agent: exit %d\n%s%s", code, out, errOut)
	}
	// The seat is on the roster once ready; the spawner finds it there.
	testutil.WaitFor(t, 10*time.Second, func() error {
		if _, errOut, code := c.as(boss, "screen", "mine"); code != 0 {
			return &cliErr{"screen mine", errOut}
		}
		return nil
	})

	_, errOut, code := c.as(boss, "input", "mine", "echo PWNED")
	if code != 1 || !strings.Contains(errOut, "only the operator may type into a seat") {
		t.Errorf("input as the agent: exit %d\n%s", code, errOut)
	}
	_, errOut, code = c.as(boss, "ps")
	if code != 1 || strings.Contains(errOut, "registry is unreadable") || !strings.Contains(errOut, "permission-denied") {
		t.Errorf("ps as the agent: exit %d, want the broker's or manager's refusal\n%s", code, errOut)
	}
	_, errOut, code = c.as(peer, "stop", "mine")
	if code != 1 || !strings.Contains(errOut, "permission-denied") || strings.Contains(errOut, "registry is unreadable") {
		t.Errorf("stop by another agent: exit %d\n%s", code, errOut)
	}
	// attach locates the seat the same way and is granted a session.
	g := c.globals()
	g.creds = boss
	cl, nc, err := g.caller().Managers()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	row, err := cl.Locate(testmesh.Ctx(t), "mine", "")
	if err != nil {
		t.Fatalf("locating mine as the agent: %v", err)
	}
	if grant, err := cl.Attach(testmesh.Ctx(t), row.Seat()); err != nil || len(grant) == 0 {
		t.Fatalf("attach as the spawner: %v", err)
	}
	out, errOut, code := c.as(boss, "stop", "mine", "--force")
	if code != 0 || !strings.Contains(out, "stopped mine") {
		t.Fatalf("stop as the spawner: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = c.run("ps")
	if !strings.Contains(out, "mine") || strings.Contains(out, "PWNED") {
		t.Errorf("the operator's ps after the agent's stop:\n%s", out)
	}
}

type cliErr struct{ what, stderr string }

func (e *cliErr) Error() string { return e.what + ": " + e.stderr }
