package mcp_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cotal-go/cotal/mesh"
)

// cotal_inbox puts DMs and tasks before channel posts, and history last.
func TestInboxOrdersDirectedThenChannelThenHistory(t *testing.T) {
	h := startMesh(t)
	aliceCreds := h.mint("alice", "dev", []string{"team"}, []string{"team"})
	bob := h.peer(h.mint("bob", "", []string{"team"}, []string{"team"}))
	// Posted before alice is first on the mesh: her join replays it.
	if _, err := bob.Send(ctxT(t), "team", "early"); err != nil {
		t.Fatal(err)
	}
	c := standalone(t, h, aliceCreds)
	c.waitOK("cotal_orientation", nil, "You are alice")
	if _, err := bob.Send(ctxT(t), "team", "post"); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Ask(ctxT(t), "dev", "task"); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.DM(ctxT(t), "alice", "dm"); err != nil {
		t.Fatal(err)
	}
	text := c.waitText("cotal_inbox", map[string]any{"peek": true}, holding("dm", "task", "post", "early"))
	lines := strings.Split(text, "\n")[1:]
	want := []string{"[DM from bob] dm", "[@dev from bob] task", "[#team bob] post", "(history) [#team bob] early"}
	if len(lines) != 4 || lines[2] != want[2] || lines[3] != want[3] || !(lines[0] == want[0] && lines[1] == want[1] || lines[0] == want[1] && lines[1] == want[0]) {
		t.Fatalf("inbox order:\n%s\nwant the DM and the task, then the post, then the history: %q", text, want)
	}
}

// A reply holds at most 48 000 characters: what does not fit stays for the
// next read, and an item larger than any reply is named and kept.
func TestInboxWindowBoundsEachReply(t *testing.T) {
	h := startMesh(t)
	aliceCreds := h.mint("alice", "", nil, nil)
	bob := h.peer(h.mint("bob", "", nil, nil))
	c := standalone(t, h, aliceCreds)
	c.waitOK("cotal_orientation", nil, "You are alice")

	big := func(tag string, n int) string { return tag + strings.Repeat("x", n-len(tag)) }
	for i := range 3 {
		if _, err := bob.DM(ctxT(t), "alice", big(fmt.Sprintf("part%d-", i), 20000)); err != nil {
			t.Fatal(err)
		}
	}
	huge := big("huge-", 50000)
	if _, err := bob.DM(ctxT(t), "alice", huge); err != nil {
		t.Fatal(err)
	}
	c.waitText("cotal_inbox", map[string]any{"peek": true}, holding("Too large for one reply", "1 more message(s) waiting"))
	first := c.ok("cotal_inbox", nil)
	if n := utf8.RuneCountInString(first); n > mesh.InboxWindowChars {
		t.Fatalf("first read is %d characters, over %d", n, mesh.InboxWindowChars)
	}
	if strings.Count(first, "[DM from bob] part") != 2 || !strings.Contains(first, "1 more message(s) waiting") ||
		!strings.Contains(first, "so kept in your inbox: a DM from bob (50014 characters)") || strings.Contains(first, "huge-") {
		t.Fatalf("first read: two parts, one more waiting and the huge DM named and kept; got:\n%.400s", first)
	}
	second := c.ok("cotal_inbox", nil)
	if strings.Count(second, "[DM from bob] part") != 1 || !strings.Contains(second, "a DM from bob (50014 characters)") {
		t.Fatalf("second read: the third part and the huge DM still kept; got:\n%.400s", second)
	}
	parts := first + second
	for i := range 3 {
		if !strings.Contains(parts, fmt.Sprintf("part%d-", i)) {
			t.Errorf("part %d never returned", i)
		}
	}
	third := c.ok("cotal_inbox", nil)
	if strings.Contains(third, "part") || !strings.HasPrefix(third, "Too large for one reply of 48000 characters, so kept in your inbox: a DM from bob") {
		t.Fatalf("third read: only the kept DM named; got:\n%.400s", third)
	}
}
