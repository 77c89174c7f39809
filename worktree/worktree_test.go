package worktree_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/worktree"
)

// gitT runs git in dir for a test, failing it on error.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newRepo is a git repository on branch main with one commit of notes.txt
// and a .cotal directory, its identity set in its own config.
func newRepo(t *testing.T) *worktree.Repo {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "main")
	gitT(t, dir, "config", "user.email", "test@example.invalid")
	gitT(t, dir, "config", "user.name", "Test")
	gitT(t, dir, "config", "commit.gpgsign", "false")
	write(t, filepath.Join(dir, "notes.txt"), "one\ntwo\nthree\n")
	if err := os.MkdirAll(filepath.Join(dir, ".cotal", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "add", "notes.txt")
	gitT(t, dir, "commit", "-q", "-m", "first")
	r, err := worktree.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func create(t *testing.T, r *worktree.Repo, seat string) *worktree.Record {
	t.Helper()
	rec, err := r.Create(context.Background(), worktree.Options{Seat: seat, Owner: seat + "-1"})
	if err != nil {
		t.Fatalf("create %s: %v", seat, err)
	}
	return rec
}

// commitIn edits notes.txt's second line in a worktree and commits it.
func commitIn(t *testing.T, dir, line string) {
	t.Helper()
	write(t, filepath.Join(dir, "notes.txt"), "one\n"+line+"\nthree\n")
	gitT(t, dir, "commit", "-q", "-am", "edit "+line)
}

func mainClean(t *testing.T, r *worktree.Repo) {
	t.Helper()
	if s := gitT(t, r.Root, "status", "--porcelain=v1", "--untracked-files=all"); s != "" {
		t.Fatalf("the main checkout is not clean:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(r.Root, ".git", "MERGE_HEAD")); err == nil {
		t.Fatal("the main checkout is left in a merge")
	}
}

func TestTwoSeatsEditTheSameFileApart(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	a, b := create(t, r, "alpha"), create(t, r, "beta")
	if a.Path != filepath.Join(r.Root, ".cotal", "worktrees", "alpha") || a.Branch != "cotal/alpha" || a.Base != "main" {
		t.Fatalf("alpha's record: %+v", a)
	}
	commitIn(t, a.Path, "alpha's two")
	commitIn(t, b.Path, "beta's two")
	if got := read(t, filepath.Join(r.Root, "notes.txt")); got != "one\ntwo\nthree\n" {
		t.Fatalf("the main checkout's file changed: %q", got)
	}
	mainClean(t, r)

	for seat, want := range map[string]string{"alpha": "+alpha's two", "beta": "+beta's two"} {
		d, err := r.Diff(ctx, seat)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Files) != 1 || d.Files[0].Path != "notes.txt" || d.Files[0].Added != 1 || d.Files[0].Deleted != 1 {
			t.Fatalf("%s's diff files: %+v", seat, d.Files)
		}
		if !strings.Contains(d.Patch, want) || !strings.Contains(d.Patch, "-two") {
			t.Fatalf("%s's patch lacks %q:\n%s", seat, want, d.Patch)
		}
	}

	m, err := r.Merge(ctx, "alpha", false)
	if err != nil {
		t.Fatal(err)
	}
	if m.Commits != 1 || m.Base != "main" {
		t.Fatalf("merge: %+v", m)
	}
	if got := read(t, filepath.Join(r.Root, "notes.txt")); !strings.Contains(got, "alpha's two") {
		t.Fatalf("alpha's change is not in the main checkout: %q", got)
	}
	head := gitT(t, r.Root, "rev-parse", "HEAD")

	_, err = r.Merge(ctx, "beta", false)
	var ce *worktree.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, worktree.ErrConflict) {
		t.Fatalf("merging beta after alpha: %v, want a conflict", err)
	}
	if !slices.Equal(ce.Files, []string{"notes.txt"}) {
		t.Fatalf("conflict files %v", ce.Files)
	}
	mainClean(t, r)
	if gitT(t, r.Root, "rev-parse", "HEAD") != head {
		t.Fatal("a refused merge moved main")
	}
	if _, err := r.Merge(ctx, "beta", true); !errors.As(err, &ce) {
		t.Fatalf("rebasing beta after alpha: %v, want a conflict", err)
	}
	mainClean(t, r)
	if s := gitT(t, b.Path, "status", "--porcelain=v1"); s != "" {
		t.Fatalf("a refused rebase left the seat's worktree changed:\n%s", s)
	}
}

func TestMergeRefusals(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	a := create(t, r, "alpha")
	if _, err := r.Merge(ctx, "alpha", false); !errors.Is(err, worktree.ErrNothing) {
		t.Fatalf("merging an empty branch: %v", err)
	}
	write(t, filepath.Join(a.Path, "notes.txt"), "changed\n")
	if _, err := r.Merge(ctx, "alpha", false); !errors.Is(err, worktree.ErrUncommitted) {
		t.Fatalf("merging with uncommitted work: %v", err)
	}
	gitT(t, a.Path, "commit", "-q", "-am", "x")
	write(t, filepath.Join(r.Root, "notes.txt"), "mine\n")
	if _, err := r.Merge(ctx, "alpha", false); !errors.Is(err, worktree.ErrMainDirty) {
		t.Fatalf("merging into a dirty main checkout: %v", err)
	}
	gitT(t, r.Root, "checkout", "-q", "--", "notes.txt")
	gitT(t, r.Root, "switch", "-q", "-c", "other")
	if _, err := r.Merge(ctx, "alpha", false); err == nil || !strings.Contains(err.Error(), "git switch main") {
		t.Fatalf("merging with main on another branch: %v", err)
	}
	gitT(t, r.Root, "switch", "-q", "main")
	if _, err := r.Merge(ctx, "alpha", true); err != nil {
		t.Fatalf("rebase merge: %v", err)
	}
	if got := gitT(t, r.Root, "rev-parse", "HEAD"); got != gitT(t, r.Root, "rev-parse", "cotal/alpha") {
		t.Fatal("a rebase merge did not fast-forward main to the branch")
	}
	mainClean(t, r)
}

func TestStatusAndRemove(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	a := create(t, r, "alpha")
	st, err := r.Status(ctx, "alpha")
	if err != nil || st.State != worktree.Clean || st.Holder != "alpha-1" {
		t.Fatalf("fresh status %+v, %v", st, err)
	}
	if _, err := r.Remove(ctx, "alpha", false); !errors.Is(err, worktree.ErrInUse) {
		t.Fatalf("removing a held worktree: %v", err)
	}
	write(t, filepath.Join(a.Path, "new.txt"), "untracked\n")
	if st, _ = r.Status(ctx, "alpha"); st.State != worktree.Uncommitted || !slices.Equal(st.Uncommitted, []string{"new.txt"}) {
		t.Fatalf("status with an untracked file %+v", st)
	}
	if err := r.Release("alpha", "alpha-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Remove(ctx, "alpha", false); !errors.Is(err, worktree.ErrUncommitted) {
		t.Fatalf("removing uncommitted work: %v", err)
	}
	if _, err := os.Stat(a.Path); err != nil {
		t.Fatal("a refused remove took the worktree")
	}
	gitT(t, a.Path, "add", "new.txt")
	gitT(t, a.Path, "commit", "-q", "-m", "new")
	if st, _ = r.Status(ctx, "alpha"); st.State != worktree.Unmerged || st.Ahead != 1 {
		t.Fatalf("status with a commit %+v", st)
	}
	rm, err := r.Remove(ctx, "alpha", false)
	if err != nil {
		t.Fatal(err)
	}
	if !rm.BranchKept || rm.AheadCommits != 1 {
		t.Fatalf("removing a worktree with a commit dropped its branch: %+v", rm)
	}
	gitT(t, r.Root, "show-ref", "--verify", "refs/heads/cotal/alpha")
	if _, err := os.Stat(a.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the worktree is still there")
	}

	// Force throws uncommitted work away; a clean new branch goes with it.
	b := create(t, r, "beta")
	write(t, filepath.Join(b.Path, "notes.txt"), "lost\n")
	if rm, err = r.Remove(ctx, "beta", true); err != nil || !rm.Discarded || rm.BranchKept {
		t.Fatalf("force remove %+v, %v", rm, err)
	}
	if _, err := exec.Command("git", "-C", r.Root, "show-ref", "--verify", "--quiet", "refs/heads/cotal/beta").Output(); err == nil {
		t.Fatal("the empty branch of a removed worktree is left")
	}
	mainClean(t, r)
}

func TestClaimAndReuse(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	create(t, r, "alpha")
	if _, err := r.Create(ctx, worktree.Options{Seat: "alpha", Owner: "other"}); !errors.Is(err, worktree.ErrInUse) {
		t.Fatalf("a second seat took a held worktree: %v", err)
	}
	if _, err := r.Create(ctx, worktree.Options{Seat: "beta", Branch: "cotal/alpha", Owner: "b"}); !errors.Is(err, worktree.ErrInUse) {
		t.Fatalf("a second worktree took a branch checked out in another: %v", err)
	}
	if r.Holder("beta") != "" {
		t.Fatal("a refused create kept its claim")
	}
	if err := r.Release("alpha", "other"); err != nil || r.Holder("alpha") != "alpha-1" {
		t.Fatal("a release by another owner let go of the worktree")
	}
	_ = r.Release("alpha", "alpha-1")
	if rec, err := r.Create(ctx, worktree.Options{Seat: "alpha", Owner: "alpha-2"}); err != nil || rec.Branch != "cotal/alpha" {
		t.Fatalf("taking back a kept worktree: %+v, %v", rec, err)
	}

	gitT(t, r.Root, "branch", "cotal/gamma")
	if _, err := r.Create(ctx, worktree.Options{Seat: "gamma", Owner: "g"}); !errors.Is(err, worktree.ErrExists) {
		t.Fatalf("an old default branch reused unasked: %v", err)
	}
	gitT(t, r.Root, "branch", "feature")
	rec, err := r.Create(ctx, worktree.Options{Seat: "gamma", Branch: "feature", Owner: "g"})
	if err != nil || rec.NewBranch || rec.Branch != "feature" {
		t.Fatalf("reusing a named branch %+v, %v", rec, err)
	}
	_ = r.Release("gamma", "g")
	if rm, err := r.Remove(ctx, "gamma", false); err != nil || !rm.BranchKept {
		t.Fatalf("removing a worktree on a reused branch %+v, %v", rm, err)
	}
	gitT(t, r.Root, "show-ref", "--verify", "refs/heads/feature")
}

func TestBaseRef(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	first := strings.TrimSpace(gitT(t, r.Root, "rev-parse", "HEAD"))
	commitIn(t, r.Root, "later")
	rec, err := r.Create(ctx, worktree.Options{Seat: "old", Base: first, Owner: "o"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.BaseCommit != first || rec.Base != "" || read(t, filepath.Join(rec.Path, "notes.txt")) != "one\ntwo\nthree\n" {
		t.Fatalf("a worktree from a commit: %+v", rec)
	}
	gitT(t, r.Root, "switch", "-q", "-c", "dev")
	gitT(t, r.Root, "switch", "-q", "main")
	if rec, err = r.Create(ctx, worktree.Options{Seat: "dev", Base: "dev", Owner: "d"}); err != nil || rec.Base != "dev" {
		t.Fatalf("a worktree from a branch: %+v, %v", rec, err)
	}
}

// TestRefusesNamesThatEscape feeds names that would leave .cotal/worktrees
// or reach git as options.
func TestRefusesNamesThatEscape(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	for _, tc := range []worktree.Options{
		{Seat: ".."}, {Seat: "../x"}, {Seat: "/tmp/x"}, {Seat: "-x"}, {Seat: "a/b"}, {Seat: ""}, {Seat: ".records"}, {Seat: "a b"},
		{Seat: "s", Branch: "-x"}, {Seat: "s", Branch: "--force"}, {Seat: "s", Branch: "a..b"}, {Seat: "s", Branch: "refs/heads/x"},
		{Seat: "s", Branch: "x.lock"}, {Seat: "s", Branch: "HEAD"}, {Seat: "s", Branch: "a b"},
		{Seat: "s", Base: "-x"}, {Seat: "s", Base: "--upload-pack=touch /tmp/owned"}, {Seat: "s", Base: "nosuch"}, {Seat: "s", Base: "HEAD\n--all"},
	} {
		if _, err := r.Create(ctx, tc); !errors.Is(err, worktree.ErrBadName) {
			t.Errorf("create %+v: %v, want a refused name", tc, err)
		}
	}
	ents, _ := os.ReadDir(r.Dir())
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			t.Errorf("a refused create left %s", e.Name())
		}
	}
	for _, seat := range []string{"..", "../../etc", "-x"} {
		if _, err := r.Status(ctx, seat); !errors.Is(err, worktree.ErrBadName) {
			t.Errorf("status %q: %v", seat, err)
		}
		if _, err := r.Remove(ctx, seat, true); !errors.Is(err, worktree.ErrBadName) {
			t.Errorf("remove %q: %v", seat, err)
		}
	}
}

func TestCopyForSetup(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	write(t, filepath.Join(r.Root, ".env"), "SECRET=1\n")
	if err := os.Chmod(filepath.Join(r.Root, ".env"), 0o600); err != nil {
		t.Fatal(err)
	}
	gitT(t, r.Root, "config", "core.excludesFile", "/dev/null")
	a := create(t, r, "alpha")
	if err := r.Copy("alpha", []string{".env"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(a.Path, ".env"))
	if err != nil || fi.Mode().Perm() != 0o600 || read(t, filepath.Join(a.Path, ".env")) != "SECRET=1\n" {
		t.Fatalf("copied .env: %v %v", fi, err)
	}
	if st, _ := r.Status(ctx, "alpha"); st.State != worktree.Clean {
		t.Fatalf("a copied file counts as work: %+v", st)
	}
	if d, err := r.Diff(ctx, "alpha"); err != nil || len(d.Files) != 0 {
		t.Fatalf("a copied file shows in the diff: %+v %v", d, err)
	}
	for _, bad := range []string{"../outside", "/etc/passwd", ".git/config", "nosuch"} {
		if err := r.Copy("alpha", []string{bad}); err == nil {
			t.Errorf("copy %q was allowed", bad)
		}
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(r.Root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := r.Copy("alpha", []string{"link"}); !errors.Is(err, worktree.ErrCopy) {
		t.Errorf("copying a symlink: %v", err)
	}
	// A directory on the seat's branch that is a symlink must not carry a
	// copy out of the worktree.
	out := t.TempDir()
	if err := os.Symlink(out, filepath.Join(a.Path, "conf")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(r.Root, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(r.Root, "conf", "local"), "x")
	if err := r.Copy("alpha", []string{"conf/local"}); !errors.Is(err, worktree.ErrCopy) {
		t.Errorf("copying through a symlinked directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "local")); err == nil {
		t.Error("a copy was written outside the worktree")
	}
}

func TestDiffCoversUncommittedAndUntracked(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	a := create(t, r, "alpha")
	commitIn(t, a.Path, "committed")
	write(t, filepath.Join(a.Path, "notes.txt"), "one\ncommitted\nthree\nunstaged\n")
	write(t, filepath.Join(a.Path, "fresh.txt"), "brand new\n")
	d, err := r.Diff(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range d.Files {
		paths = append(paths, f.Path)
	}
	if !slices.Equal(paths, []string{"fresh.txt", "notes.txt"}) || d.Added != 3 || d.Deleted != 1 {
		t.Fatalf("diff files %+v (+%d -%d)", d.Files, d.Added, d.Deleted)
	}
	for _, want := range []string{"+committed", "+unstaged", "+brand new"} {
		if !strings.Contains(d.Patch, want) {
			t.Errorf("patch lacks %q:\n%s", want, d.Patch)
		}
	}
	if s := gitT(t, a.Path, "status", "--porcelain=v1"); !strings.Contains(s, "?? fresh.txt") {
		t.Fatalf("the diff changed the worktree's index:\n%s", s)
	}
	// Main moving on does not put its commits in the seat's diff.
	commitIn(t, r.Root, "main's own")
	if d, _ = r.Diff(ctx, "alpha"); strings.Contains(d.Patch, "main's own") {
		t.Fatalf("the diff shows main's commit:\n%s", d.Patch)
	}
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	create(t, r, "clean")
	b := create(t, r, "work")
	create(t, r, "held")
	write(t, filepath.Join(b.Path, "notes.txt"), "x\n")
	_ = r.Release("clean", "clean-1")
	_ = r.Release("work", "work-1")
	got, err := r.Prune(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Seat != "clean" {
		t.Fatalf("pruned %+v, want only the clean one", got)
	}
	list, _ := r.List(ctx)
	var left []string
	for _, st := range list {
		left = append(left, st.Seat+":"+st.State)
	}
	if !slices.Equal(left, []string{"held:clean", "work:uncommitted"}) {
		t.Fatalf("left %v", left)
	}
}

func TestOpenFromALinkedWorktree(t *testing.T) {
	r := newRepo(t)
	a := create(t, r, "alpha")
	r2, err := worktree.Open(context.Background(), a.Path)
	if err != nil || r2.Root != r.Root {
		t.Fatalf("open from a worktree: %+v, %v", r2, err)
	}
	if _, err := worktree.Open(context.Background(), t.TempDir()); !errors.Is(err, worktree.ErrNotRepo) {
		t.Fatalf("open outside a repository: %v", err)
	}
}

// TestNothingASeatPlantsInTheRepositoryRuns: a seat writes the shared
// repository's config and hooks (its commits need .git); cotal's own git
// commands for the person (diff, status, merge) run no hook, filter,
// fsmonitor or merge driver it named there.
func TestNothingASeatPlantsInTheRepositoryRuns(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	a := create(t, r, "alpha")
	marks := t.TempDir()
	planted := func(what string) string { return "touch " + filepath.Join(marks, what) + "; cat" }
	gitT(t, r.Root, "config", "filter.evil.clean", planted("clean"))
	gitT(t, r.Root, "config", "filter.evil.smudge", planted("smudge"))
	gitT(t, r.Root, "config", "merge.evil.driver", "touch "+filepath.Join(marks, "driver")+"; false")
	monitor := filepath.Join(t.TempDir(), "fsmonitor.sh")
	write(t, monitor, "#!/bin/sh\ntouch "+filepath.Join(marks, "fsmonitor")+"\n")
	if err := os.Chmod(monitor, 0o700); err != nil {
		t.Fatal(err)
	}
	gitT(t, r.Root, "config", "core.fsmonitor", monitor)
	hooks := filepath.Join(r.Root, ".git", "hooks")
	for _, h := range []string{"pre-merge-commit", "post-merge", "post-checkout", "reference-transaction", "pre-commit", "commit-msg"} {
		write(t, filepath.Join(hooks, h), "#!/bin/sh\ntouch "+filepath.Join(marks, "hook-"+h)+"\n")
		if err := os.Chmod(filepath.Join(hooks, h), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// The seat's branch routes its files through the planted drivers.
	write(t, filepath.Join(a.Path, ".gitattributes"), "* filter=evil merge=evil\n")
	gitT(t, a.Path, "add", ".gitattributes")
	gitT(t, a.Path, "commit", "-qm", "attributes")
	commitIn(t, a.Path, "alpha's line")
	write(t, filepath.Join(a.Path, "notes.txt"), read(t, filepath.Join(a.Path, "notes.txt"))+"uncommitted\n")

	// What the seat's own git commands ran is not cotal's doing.
	clear := func() {
		if err := os.RemoveAll(marks); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(marks, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string) {
		t.Helper()
		ents, err := os.ReadDir(marks)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			t.Errorf("cotal's %s ran what a seat planted: %s", what, e.Name())
		}
	}
	clear()
	if _, err := r.Diff(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Status(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	check("diff and status")
	gitT(t, a.Path, "checkout", "-q", "--", "notes.txt")
	clear()
	if _, err := r.Merge(ctx, "alpha", false); err != nil {
		t.Fatal(err)
	}
	check("merge")
	if got := read(t, filepath.Join(r.Root, "notes.txt")); !strings.Contains(got, "alpha's line") {
		t.Fatalf("the merge did not bring alpha's line: %q", got)
	}
}
