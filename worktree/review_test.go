package worktree_test

import (
	"context"
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
