package worktree_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/worktree"
)

const reviewed = `# Review: help
# more help
diff --git a/notes.txt b/notes.txt
index 1111111..2222222 100644
--- a/notes.txt
+++ b/notes.txt
whole file remark
@@ -1,3 +1,4 @@
 one
-two
why drop two?
+deux
+trois
please spell it three
>+ not a diff line
 three

diff --git a/new.go b/new.go
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new.go
@@ -0,0 +1,2 @@
+package x
+
\ No newline at end of file
trailing blank line
`

func TestParseReview(t *testing.T) {
	got := worktree.ParseReview(reviewed)
	want := []worktree.Comment{
		{Path: "notes.txt", Text: "whole file remark"},
		{Path: "notes.txt", OldLine: 2, Removed: true, Code: "two", Text: "why drop two?"},
		{Path: "notes.txt", Line: 3, Code: "trois", Text: "please spell it three\n+ not a diff line"},
		{Path: "new.go", Line: 2, Code: "", Text: "trailing blank line"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
	if c := worktree.ParseReview(worktree.ReviewHelp + "diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n"); len(c) != 0 {
		t.Fatalf("an untouched review has comments: %+v", c)
	}
}

// TestReviewOfARealDiff writes a comment under a line of a real diff's
// review file and reads it back at that file and line.
func TestReviewOfARealDiff(t *testing.T) {
	r := newRepo(t)
	a := create(t, r, "alpha")
	write(t, filepath.Join(a.Path, "notes.txt"), "one\ntwo\nthree\nfour\n")
	d, err := r.Diff(context.Background(), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	text := worktree.ReviewFile(d)
	text = strings.Replace(text, "+four\n", "+four\nfour is not needed\n", 1)
	got := worktree.ParseReview(text)
	if len(got) != 1 || got[0].Path != "notes.txt" || got[0].Line != 4 || got[0].Text != "four is not needed" || got[0].Code != "four" {
		t.Fatalf("comments %+v from\n%s", got, text)
	}
}

// TestReviewSessionThroughARealEditor: a review's editor is a real program
// ($EDITOR with an argument of its own, split by the shell) that writes a
// comment into the file; the comment comes back at its line and becomes
// the message naming the file and line; the file is gone once closed.
// Without an editor, or without changes, there is no review.
func TestReviewSessionThroughARealEditor(t *testing.T) {
	r := newRepo(t)
	a := create(t, r, "alpha")
	ctx := context.Background()
	if _, err := r.StartReview(ctx, "alpha"); err == nil || !strings.Contains(err.Error(), "nothing to review") {
		t.Fatalf("review of a seat with no changes: %v", err)
	}
	write(t, filepath.Join(a.Path, "notes.txt"), "one\ntwo\nthree\nfour\n")
	rv, err := r.StartReview(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rv.Editor(func(string) string { return " " }); !errors.Is(err, worktree.ErrNoEditor) {
		t.Fatalf("a blank $EDITOR: %v, want ErrNoEditor", err)
	}
	script := filepath.Join(t.TempDir(), "ed.sh")
	write(t, script, "#!/bin/sh\n[ \"$1\" = -w ] || exit 3\nsed -i 's/^+four$/+four\\nfour is not needed/' \"$2\"\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"EDITOR": "nano", "VISUAL": script + " -w"}
	cmd, err := rv.Editor(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the editor: %v\n%s", err, out)
	}
	got, err := rv.Comments()
	if err != nil || len(got) != 1 || got[0].Line != 4 || got[0].Text != "four is not needed" {
		t.Fatalf("comments %+v, %v", got, err)
	}
	want := "Review of your work on branch cotal/alpha (against main): 1 comment(s).\n\nnotes.txt:4: four\n  four is not needed"
	if msg := rv.Message(got); msg != want {
		t.Fatalf("message\n%s\nwant\n%s", msg, want)
	}
	rv.Close()
	if _, err := os.Stat(rv.Path); !os.IsNotExist(err) {
		t.Fatalf("the review file is left after Close: %v", err)
	}
}

// TestReviewMessageNamesEachKindOfLine: a comment on a removed line names
// the base's line, one on the file's header the whole file, each comment
// line indented.
func TestReviewMessageNamesEachKindOfLine(t *testing.T) {
	rv := &worktree.Review{Diff: &worktree.Diff{Branch: "cotal/a", Base: "main"}}
	got := rv.Message([]worktree.Comment{
		{Path: "x.go", Text: "whole"},
		{Path: "x.go", OldLine: 2, Removed: true, Code: " two ", Text: "why\nnot"},
	})
	want := "Review of your work on branch cotal/a (against main): 2 comment(s).\n\nx.go (the whole file)\n  whole\n\nx.go, removed line 2 of the base: two\n  why\n  not"
	if got != want {
		t.Fatalf("message\n%s\nwant\n%s", got, want)
	}
}
