package seat_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/worktree"
)

// gitInit makes the test's project a git repository with one commit.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"config", "user.email", "test@example.invalid"}, {"config", "user.name", "Test"},
		{"config", "commit.gpgsign", "false"},
	} {
		gitRun(t, dir, args...)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".env\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, dir, "add", "notes.txt", ".gitignore")
	gitRun(t, dir, "commit", "-q", "-m", "first")
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// treePersona writes a command persona that runs in a worktree, copies
// .env and runs a setup command, then runs script.
func (h *harness) treePersona(name, script string) {
	h.t.Helper()
	body := fmt.Sprintf("---\nname: %s\nagent: command\ncommand: sh\nargs: [\"-c\", %q]\nworktree: true\nsetup:\n  copy: [.env]\n  run: echo setup-ran-in-$(basename \"$PWD\")\n---\n", name, script)
	if err := os.MkdirAll(config.AgentsDir(h.project), 0o700); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config.AgentsDir(h.project), name+".md"), []byte(body), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// TestSeatInAWorktree: a seat of a worktree: true persona starts in its own
// worktree with the setup done; when it stops, a clean worktree goes and
// one with uncommitted work stays, and ps says which.
func TestSeatInAWorktree(t *testing.T) {
	h := startMesh(t, 10*time.Second)
	gitInit(t, h.project)
	if err := os.WriteFile(filepath.Join(h.project, ".env"), []byte("TOKEN=abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.treePersona("busy", `echo "in $PWD"; cat .env; echo work > work.txt; echo ready; exec sleep 600`)
	h.treePersona("idle", `echo ready; exec sleep 600`)
	busy, idle := h.ready("busy"), h.ready("idle")
	project, _ := filepath.EvalSymlinks(h.project)
	want := filepath.Join(project, ".cotal", "worktrees", "busy")
	scr := waitScreen(t, h.c, h.iid, busy.Name, "TOKEN=abc", 10*time.Second)
	if !strings.Contains(scr, "setup-ran-in-busy") || !strings.Contains(scr, "in "+want) {
		t.Fatalf("the seat did not start in its worktree after its setup:\n%s", scr)
	}
	r, _ := row(ps(t, h.c, h.iid), busy.Name)
	if r.Worktree == nil || r.Worktree.Path != want || r.Worktree.Branch != "cotal/busy" || r.Worktree.Base != "main" || r.Worktree.Kept != "" {
		t.Fatalf("ps row's worktree %+v", r.Worktree)
	}
	waitFor(t, 10*time.Second, func() error {
		if _, err := os.Stat(filepath.Join(want, "work.txt")); err != nil {
			return err
		}
		return nil
	})
	if s := gitRun(t, h.project, "status", "--porcelain", "--", ".", ":(exclude).cotal/agents"); s != "" {
		t.Fatalf("the main checkout changed:\n%s", s)
	}

	for _, acc := range []client.SpawnAccepted{busy, idle} {
		if _, err := mgr(h.c).Stop(ctxT(t), client.Seat{Name: acc.Name, Manager: h.iid}, false); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, func() error {
		cs := ps(t, h.c, h.iid)
		b, _ := row(cs, busy.Name)
		i, _ := row(cs, idle.Name)
		if b.Worktree == nil || b.Worktree.Kept != "uncommitted" || i.Worktree == nil || !i.Worktree.Removed {
			return fmt.Errorf("busy %+v, idle %+v", b.Worktree, i.Worktree)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(want, "work.txt")); err != nil {
		t.Fatalf("the kept worktree lost its work: %v", err)
	}
	if _, err := os.Stat(filepath.Join(project, ".cotal", "worktrees", "idle")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the clean worktree is still there: %v", err)
	}
	if out := gitRun(t, h.project, "branch", "--list", "cotal/idle"); out != "" {
		t.Fatalf("the clean worktree's branch is left: %s", out)
	}

	// A new seat of the same name takes the kept worktree back, its work in it.
	again := h.ready("busy")
	if r, _ := row(ps(t, h.c, h.iid), again.Name); r.Worktree == nil || r.Worktree.Path != want {
		t.Fatalf("a respawn did not take the kept worktree back: %+v", r.Worktree)
	}
}

// TestWorktreeSpawnRefusals: worktree arguments that make no sense, or
// names that would reach git as options or leave .cotal/worktrees, are
// refused and start nothing.
func TestWorktreeSpawnRefusals(t *testing.T) {
	h := startMesh(t, 10*time.Second)
	gitInit(t, h.project)
	h.persona("plain", "sh", []string{"-c", "echo ready; exec sleep 600"}, nil)
	for _, a := range []client.SpawnArgs{
		{Persona: "plain", Branch: "x"},
		{Persona: "plain", Base: "main"},
		{Persona: "plain", Worktree: true, Cwd: "/tmp"},
	} {
		_, err := spawn(t, h.c, h.iid, a)
		if e := errCode(t, err); e.Code != proto.CodeBadRequest {
			t.Errorf("spawn %+v: %v, want a bad request", a, e)
		}
	}
	for _, a := range []client.SpawnArgs{
		{Persona: "plain", Worktree: true, Branch: "--force"},
		{Persona: "plain", Worktree: true, Branch: "../../escape"},
		{Persona: "plain", Worktree: true, Base: "--upload-pack=touch /tmp/x"},
	} {
		acc := mustSpawn(t, h.c, h.iid, a)
		res := goal(t, h.c, h.iid, acc.GoalID, 10*time.Second)
		if res.State != ep.GoalFailed || res.Error == nil || !strings.Contains(res.Error.Message, "refused name") {
			t.Errorf("spawn %+v: %s %+v, want it failed on the name", a, res.State, res.Error)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(h.project, ".cotal", "worktrees"))
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			t.Errorf("a refused spawn left worktree %s", e.Name())
		}
	}
}

// TestStaleWorktreeClaimIsTakenOver: a worktree still claimed by a
// lifecycle whose credential is gone (its manager died with it) goes to
// the next seat of its name; the claim is not taken from a live seat.
func TestStaleWorktreeClaimIsTakenOver(t *testing.T) {
	h := startMesh(t, 10*time.Second)
	gitInit(t, h.project)
	if err := os.WriteFile(filepath.Join(h.project, ".env"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.treePersona("solo", `echo ready; exec sleep 600`)
	repo, err := worktree.Open(ctxT(t), h.project)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Create(ctxT(t), worktree.Options{Seat: "solo", Owner: "lifecycle-long-gone"}); err != nil {
		t.Fatal(err)
	}
	acc := h.ready("solo")
	if got := repo.Holder("solo"); got != acc.UID {
		t.Fatalf("the worktree is held by %q, want the new seat's lifecycle %s", got, acc.UID)
	}
	if _, err := repo.Create(ctxT(t), worktree.Options{Seat: "solo", Owner: "someone-else"}); !errors.Is(err, worktree.ErrInUse) {
		t.Fatalf("a live seat's worktree was given away: %v", err)
	}
}

// TestFailedSetupFailsTheSpawn: a setup command that fails ends the seat
// before its program runs, and the spawn fails saying so.
func TestFailedSetupFailsTheSpawn(t *testing.T) {
	h := startMesh(t, 10*time.Second)
	gitInit(t, h.project)
	body := "---\nname: broken\nagent: command\ncommand: sh\nargs: [\"-c\", \"echo PROGRAM-RAN; exec sleep 600\"]\nworktree: true\nsetup:\n  run: echo preparing; exit 3\n---\n"
	if err := os.MkdirAll(config.AgentsDir(h.project), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config.AgentsDir(h.project), "broken.md"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "broken"})
	res := goal(t, h.c, h.iid, acc.GoalID, 15*time.Second)
	if res.State != ep.GoalFailed || res.Error == nil || !strings.Contains(res.Error.Message, "the persona's setup command failed (exit 3)") ||
		strings.Contains(res.Error.Message, "PROGRAM-RAN") {
		t.Fatalf("spawn with a failing setup: %s %+v", res.State, res.Error)
	}
}
