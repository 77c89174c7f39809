package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/seat/client"
)

// gitIn runs git in dir for a test.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// gitProject is a project with personas in a new git repository on main,
// whose first commit holds notes.txt with notes.
func gitProject(t *testing.T, personas map[string]string, notes string) string {
	t.Helper()
	dir := project(t, personas)
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "config", "user.email", "test@example.invalid")
	gitIn(t, dir, "config", "user.name", "Test")
	gitIn(t, dir, "config", "commit.gpgsign", "false")
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(notes), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "first")
	return dir
}

// TestTwoSeatsInWorktreesReviewedAndMerged: two seats in worktrees of one
// repository edit the same line of the same file on their branches while
// the main checkout stays as it was; diff shows each one's change; a review
// comment written in $EDITOR under a line reaches its seat as one DM naming
// the file and line; merging one succeeds and the other is refused on the
// conflict with the main checkout left clean; a seat stopped with
// uncommitted work keeps its worktree, which worktree rm refuses to drop
// without --force; a clean one goes when its seat stops.
func TestTwoSeatsInWorktreesReviewedAndMerged(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := gitProject(t, map[string]string{"coder": "agent: command\ncommand: sh\nworktree: true"}, "one\ntwo\nthree\n")
	if _, stderr, code := runIn(t, home, dir, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	for _, name := range []string{"alpha", "beta"} {
		if out, stderr, code := runIn(t, home, dir, "spawn", "coder", "--name", name); code != 0 {
			t.Fatalf("spawn %s: exit %d\n%s%s", name, code, out, stderr)
		}
		if _, stderr, code := runIn(t, home, dir, "input", name, "printf 'one\\n"+name+"\\nthree\\n' > notes.txt && git commit -qam "+name+" && echo COMMITTED-$((40+2))"); code != 0 {
			t.Fatalf("input %s: %s", name, stderr)
		}
		waitSeatScreen(t, home, dir, name, "COMMITTED-42", func(s string) bool { return strings.Contains(s, "\nCOMMITTED-42") })
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("the main checkout's notes.txt changed: %q", b)
	}
	clean := func() {
		t.Helper()
		if s := gitIn(t, dir, "status", "--porcelain", "--untracked-files=all"); s != "" {
			t.Fatalf("the main checkout is not clean:\n%s", s)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "MERGE_HEAD")); err == nil {
			t.Fatal("the main checkout is left half merged")
		}
	}
	clean()

	out, stderr, code := runIn(t, home, dir, "ps")
	if code != 0 || !strings.Contains(out, "alpha works in worktree "+filepath.Join(dir, ".cotal", "worktrees", "alpha")+" on branch cotal/alpha (base main)") {
		t.Fatalf("ps does not say where alpha works: exit %d\n%s%s", code, out, stderr)
	}
	for _, name := range []string{"alpha", "beta"} {
		out, stderr, code := runIn(t, home, dir, "diff", name)
		if code != 0 || !strings.Contains(out, name+" (branch cotal/"+name+") against main: 1 file(s), +1 -1") ||
			!strings.Contains(out, "  notes.txt +1 -1") || !strings.Contains(out, "\n+"+name+"\n") || !strings.Contains(out, "\n-two\n") {
			t.Fatalf("diff %s: exit %d\n%s%s", name, code, out, stderr)
		}
	}

	// The person's editor: a script that writes a comment under alpha's line.
	editor := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nsed -i '/^+alpha$/a call it first, not alpha' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = runInEnv(t, home, dir, "seats", []string{"EDITOR=" + editor, "VISUAL="}, "review", "alpha", "--json")
	var rv struct {
		Sent     bool `json:"sent"`
		Comments []struct {
			Path string `json:"path"`
			Line int    `json:"line"`
			Text string `json:"text"`
		} `json:"comments"`
	}
	if err := json.Unmarshal([]byte(out), &rv); code != 0 || err != nil || !rv.Sent || len(rv.Comments) != 1 ||
		rv.Comments[0].Path != "notes.txt" || rv.Comments[0].Line != 2 || rv.Comments[0].Text != "call it first, not alpha" {
		t.Fatalf("review: exit %d, %v\n%s%s", code, err, out, stderr)
	}
	if _, stderr, code := runIn(t, home, dir, "input", "alpha", "cotal inbox"); code != 0 {
		t.Fatalf("input: %s", stderr)
	}
	waitSeatScreen(t, home, dir, "alpha", "the review DM", func(s string) bool {
		return strings.Contains(s, "notes.txt:2: alpha") && strings.Contains(s, "call it first, not alpha")
	})

	out, stderr, code = runIn(t, home, dir, "merge", "alpha")
	if code != 0 || !strings.Contains(out, "merged cotal/alpha (1 commit(s)) into main") {
		t.Fatalf("merge alpha: exit %d\n%s%s", code, out, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "one\nalpha\nthree\n" {
		t.Fatalf("after the merge notes.txt is %q", b)
	}
	head := gitIn(t, dir, "rev-parse", "HEAD")
	out, stderr, code = runIn(t, home, dir, "merge", "beta")
	if code != 1 || !strings.Contains(stderr, "merging cotal/beta into main would conflict in notes.txt: nothing was changed") {
		t.Fatalf("merge beta: exit %d, want 1 and the conflict\n%s%s", code, out, stderr)
	}
	clean()
	if gitIn(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("the refused merge moved main")
	}

	// beta leaves work uncommitted and stops: its worktree stays.
	if _, stderr, code := runIn(t, home, dir, "input", "beta", "echo wip > wip.txt && echo WROTE-$((40+2))"); code != 0 {
		t.Fatalf("input: %s", stderr)
	}
	waitSeatScreen(t, home, dir, "beta", "WROTE-42", func(s string) bool { return strings.Contains(s, "\nWROTE-42") })
	for _, name := range []string{"alpha", "beta"} {
		if out, stderr, code := runIn(t, home, dir, "stop", name); code != 0 {
			t.Fatalf("stop %s: exit %d\n%s%s", name, code, out, stderr)
		}
	}
	waitFor(t, screenWait, func() error {
		out, _, _ := runIn(t, home, dir, "ps", "--json")
		var cs struct {
			Rows []client.CensusRow `json:"rows"`
		}
		_ = json.Unmarshal([]byte(out), &cs)
		got := map[string]*client.WorktreeRow{}
		for _, r := range cs.Rows {
			got[r.Name] = r.Worktree
		}
		if a, b := got["alpha"], got["beta"]; a == nil || !a.Removed || b == nil || b.Kept != "uncommitted" {
			return fmt.Errorf("ps --json worktrees: alpha %+v, beta %+v\n%s", a, b, out)
		}
		return nil
	})
	out, _, _ = runIn(t, home, dir, "ps")
	if !strings.Contains(out, "beta ended with uncommitted work kept in worktree") {
		t.Fatalf("ps does not say beta's worktree is kept:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".cotal", "worktrees", "alpha")); !os.IsNotExist(err) {
		t.Fatalf("alpha's clean worktree is still there (%v)", err)
	}
	out, stderr, code = runIn(t, home, dir, "worktree", "ls", "--json")
	var ls struct {
		Worktrees []struct {
			Seat        string   `json:"seat"`
			State       string   `json:"state"`
			Branch      string   `json:"branch"`
			Uncommitted []string `json:"uncommitted"`
			Ahead       int      `json:"ahead"`
			Holder      string   `json:"holder"`
		} `json:"worktrees"`
	}
	if err := json.Unmarshal([]byte(out), &ls); code != 0 || err != nil || len(ls.Worktrees) != 1 || ls.Worktrees[0].Seat != "beta" ||
		ls.Worktrees[0].State != "uncommitted" || ls.Worktrees[0].Ahead != 1 || ls.Worktrees[0].Holder != "" || len(ls.Worktrees[0].Uncommitted) != 1 {
		t.Fatalf("worktree ls --json: exit %d, %v\n%s%s", code, err, out, stderr)
	}
	if out, _, code := runIn(t, home, dir, "worktree", "prune"); code != 0 || !strings.Contains(out, "nothing to prune") {
		t.Fatalf("prune took beta's kept work: exit %d\n%s", code, out)
	}
	out, stderr, code = runIn(t, home, dir, "worktree", "rm", "beta")
	if code != 1 || !strings.Contains(stderr, "uncommitted changes in the worktree of seat beta (wip.txt)") {
		t.Fatalf("worktree rm beta: exit %d, want a refusal\n%s%s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".cotal", "worktrees", "beta", "wip.txt")); err != nil {
		t.Fatalf("the refused rm lost beta's work: %v", err)
	}
	out, stderr, code = runIn(t, home, dir, "worktree", "rm", "beta", "--force")
	if code != 0 || !strings.Contains(out, "branch cotal/beta is kept with 1 commit(s) its base lacks") || !strings.Contains(out, "uncommitted changes were thrown away") {
		t.Fatalf("worktree rm --force: exit %d\n%s%s", code, out, stderr)
	}
	clean()
}

// TestDashboardShowsASeatsDiff: a person tabs to SEATS and presses D: the
// seat's diff opens in the pager, file list first, and what the seat wrote
// is shown inert (an escape sequence in a file is shown, never run). R
// then hands the terminal to $EDITOR on the review file, and the comment
// written there reaches the seat as a DM naming file and line.
func TestDashboardShowsASeatsDiff(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := gitProject(t, map[string]string{"coder": "agent: command\ncommand: sh\nworktree: true"}, "one\ntwo\nthree\n")
	editor := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nsed -i '/^+alpha$/a say it in French' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := startSizedEnv(t, home, dir, 120, 40, []string{"EDITOR=" + editor, "VISUAL="}, "--space", "seats")
	d.waitScreen("HOSTING", "SEATS · 0")
	if out, stderr, code := runIn(t, home, dir, "spawn", "coder", "--name", "alpha"); code != 0 {
		t.Fatalf("spawn: exit %d\n%s%s", code, out, stderr)
	}
	if _, stderr, code := runIn(t, home, dir, "input", "alpha", `printf 'one\nalpha\n\033]0;pwned\007\n' > notes.txt && echo EDITED-$((40+2))`); code != 0 {
		t.Fatalf("input: %s", stderr)
	}
	waitSeatScreen(t, home, dir, "alpha", "EDITED-42", func(s string) bool { return strings.Contains(s, "\nEDITED-42") })
	d.keys("Tab")
	d.waitLine(`SEATS · 1`)
	d.keys("D")
	d.waitScreen("DIFF alpha", "alpha (branch cotal/alpha) against main: 1 file(s), +2 -2", "notes.txt +2 -2", "+alpha", `+\x1b]0;pwned\a`)
	d.keys("Escape")
	d.waitScreen("SEATS · 1")
	if s := d.screen(); strings.Contains(s, "DIFF alpha") {
		t.Fatalf("the diff did not close:\n%s", s)
	}
	d.keys("R")
	d.waitScreen("sent 1 comment(s) on alpha's diff as one DM")
	if _, stderr, code := runIn(t, home, dir, "input", "alpha", "cotal inbox"); code != 0 {
		t.Fatalf("input: %s", stderr)
	}
	waitSeatScreen(t, home, dir, "alpha", "the review DM", func(s string) bool {
		return strings.Contains(s, "notes.txt:2: alpha") && strings.Contains(s, "say it in French")
	})
	d.quit()
}

// TestSpawnWorktreeFlags: spawn --worktree --branch --base puts a seat of a
// persona without worktree: true in a worktree on the branch named, made
// from the base named; --branch without --worktree is refused, exit 2.
func TestSpawnWorktreeFlags(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := gitProject(t, map[string]string{"plain": "agent: command\ncommand: sh"}, "one\n")
	first := strings.TrimSpace(gitIn(t, dir, "rev-parse", "HEAD"))
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "commit", "-q", "-am", "second")
	if _, stderr, code := runIn(t, home, dir, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	out, stderr, code := runIn(t, home, dir, "spawn", "plain", "--branch", "feat/x")
	if code != 2 || !strings.Contains(stderr, "add --worktree") {
		t.Fatalf("spawn --branch without --worktree: exit %d\n%s%s", code, out, stderr)
	}
	if out, stderr, code := runIn(t, home, dir, "spawn", "plain", "--worktree", "--branch", "feat/x", "--base", first); code != 0 {
		t.Fatalf("spawn --worktree: exit %d\n%s%s", code, out, stderr)
	}
	out, _, _ = runIn(t, home, dir, "ps", "--json")
	var cs struct {
		Rows []client.CensusRow `json:"rows"`
	}
	_ = json.Unmarshal([]byte(out), &cs)
	if len(cs.Rows) != 1 || cs.Rows[0].Worktree == nil || cs.Rows[0].Worktree.Branch != "feat/x" || cs.Rows[0].Worktree.Base != "" {
		t.Fatalf("ps --json: %s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".cotal", "worktrees", "plain", "notes.txt")); string(b) != "one\n" {
		t.Fatalf("the worktree is not at the base named: notes.txt %q", b)
	}
}

// TestAResumedSeatKeepsItsWorktree: a seat in a worktree preserved by
// `down --preserve-state` is resumed in it and holds it again (ps says so),
// and, stopped clean, its worktree is removed as any seat's is.
func TestAResumedSeatKeepsItsWorktree(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := gitProject(t, map[string]string{"coder": "agent: command\ncommand: sh\nworktree: true"}, "one\n")
	upIn(t, home, dir)
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	if out, stderr, code := runIn(t, home, dir, "spawn", "coder"); code != 0 {
		t.Fatalf("spawn: exit %d\n%s%s", code, out, stderr)
	}
	row := func() client.Row {
		t.Helper()
		out, _, _ := runIn(t, home, dir, "ps", "--json")
		var cs struct {
			Rows []client.Row `json:"rows"`
		}
		if err := json.Unmarshal([]byte(out), &cs); err != nil {
			t.Fatalf("ps --json: %v\n%s", err, out)
		}
		for _, r := range cs.Rows {
			if r.Name == "coder" {
				return r
			}
		}
		return client.Row{}
	}
	before := row().Worktree
	if before == nil || before.Path == "" {
		t.Fatalf("the spawned seat has no worktree: %+v", before)
	}
	if out, stderr, code := runIn(t, home, dir, "down", "--preserve-state"); code != 0 {
		t.Fatalf("down --preserve-state: exit %d\n%s%s", code, out, stderr)
	}
	upIn(t, home, dir)
	waitFor(t, 30*time.Second, func() error {
		if r := row(); r.State != "ready" {
			return fmt.Errorf("coder after the resume: %+v", r)
		}
		return nil
	})
	if after := row().Worktree; after == nil || after.Path != before.Path || after.Branch != before.Branch {
		t.Fatalf("the resumed seat's worktree: %+v, want %+v", after, before)
	}
	if _, stderr, code := runIn(t, home, dir, "stop", "coder"); code != 0 {
		t.Fatalf("stop: %s", stderr)
	}
	waitFor(t, 30*time.Second, func() error {
		if _, err := os.Stat(before.Path); err == nil {
			return fmt.Errorf("the clean worktree %s is still there after the stop", before.Path)
		}
		return nil
	})
}
