package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSeatInboxReadsInWindows: an agent reads `cotal inbox` inside its
// seat into its context, so a backlog larger than one window (48 000
// characters) comes in parts: each read clears only what it printed and
// says how to read the rest, and nothing is lost or printed twice.
func TestSeatInboxReadsInWindows(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, shellPersona, "shell")
	const n = 60 // about 1 000 characters each
	for i := range n {
		if _, stderr, code := runIn(t, home, dir, "send", "dm", "shell", fmt.Sprintf("msg-%02d %s", i, strings.Repeat("x", 990))); code != 0 {
			t.Fatalf("send %d: %s", i, stderr)
		}
	}
	if _, stderr, code := runIn(t, home, dir, "input", "shell", "cotal inbox > first.txt; cotal inbox > second.txt; echo READ-$((40+2))"); code != 0 {
		t.Fatalf("input: %s", stderr)
	}
	waitSeatScreen(t, home, dir, "shell", "READ-42", func(s string) bool { return regexp.MustCompile(`(?m)^READ-42`).MatchString(s) })
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	first, second := read("first.txt"), read("second.txt")
	if len(first) > 50_000 || !strings.Contains(first, "more message(s) waiting: run `cotal inbox` again") {
		t.Fatalf("the first read printed %d characters and says nothing of the rest:\n%.300s...%s", len(first), first, first[max(0, len(first)-300):])
	}
	msgs := regexp.MustCompile(`msg-\d\d`)
	seen := map[string]int{}
	for _, m := range append(msgs.FindAllString(first, -1), msgs.FindAllString(second, -1)...) {
		seen[m]++
	}
	for i := range n {
		if k := fmt.Sprintf("msg-%02d", i); seen[k] != 1 {
			t.Errorf("%s printed %d times over the two reads, want once", k, seen[k])
		}
	}
	if strings.Contains(second, "more message(s) waiting") {
		t.Errorf("the second read still leaves messages:\n%.300s", second)
	}
}
