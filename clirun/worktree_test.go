package clirun

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/worktree"
)

// TestWorktreeRefusalsAreTheirInput: in a real project, a seat with no
// worktree and a name that would escape are the person's input (exit 2),
// for each command on worktrees; a review of a seat with changes and no
// editor set is too, and it leaves no review file behind.
func TestWorktreeRefusalsAreTheirInput(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("config", "user.email", "test@example.invalid")
	git("config", "user.name", "Test")
	git("config", "commit.gpgsign", "false")
	if err := os.MkdirAll(filepath.Join(dir, ".cotal", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "notes.txt")
	git("commit", "-q", "-m", "first")
	t.Chdir(filepath.Join(dir, ".cotal")) // the project is found from below its root too
	for name, seat := range map[string]string{"no worktree": "nobody", "a name that escapes": "../x"} {
		for cmd, err := range map[string]error{
			"rm":     second(RemoveWorktree(t.Context(), seat, false)),
			"diff":   second(Diff(t.Context(), seat)),
			"merge":  second(Merge(t.Context(), seat, false)),
			"review": second(StartReview(t.Context(), Caller{}, seat)),
		} {
			if !cliargs.IsUsage(err) {
				t.Errorf("%s of %s: %v, want bad input", cmd, name, err)
			}
		}
	}
	if list, dir, err := Worktrees(t.Context()); err != nil || len(list) != 0 || filepath.Base(dir) != "worktrees" {
		t.Fatalf("worktree ls: %v %v %q", list, err, dir)
	}

	r, err := worktree.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Create(t.Context(), worktree.Options{Seat: "ana", Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rec.Path, "notes.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the review file goes
	if _, err := StartReview(t.Context(), Caller{}, "ana"); !cliargs.IsUsage(err) || !errors.Is(err, worktree.ErrNoEditor) {
		t.Errorf("review with no editor: %v, want bad input saying so", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("a review refused for no editor left %d file(s) behind", len(left))
	}
}
