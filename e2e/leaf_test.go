package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
)

// leafStatus is the part of `cotal status --json` the leaf tests read.
type leafStatus struct {
	Leaf *struct {
		Domain  string `json:"domain"`
		Listen  string `json:"listen"`
		Remote  string `json:"remote"`
		LinksUp int    `json:"linksUp"`
		Peers   []struct {
			Domain string `json:"domain"`
			Up     bool   `json:"up"`
		} `json:"peers"`
	} `json:"leaf"`
}

// linksUp waits until the mesh of home says n of its leaf links are up.
func linksUp(t *testing.T, home string, n int) {
	t.Helper()
	waitFor(t, 30*time.Second, func() error {
		out, _, _ := runCotal(t, home, "status", "--json")
		var s leafStatus
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			return fmt.Errorf("status --json: %v\n%s", err, out)
		}
		if s.Leaf == nil || s.Leaf.LinksUp != n {
			return fmt.Errorf("leaf links up: want %d, status says %s", n, out)
		}
		return nil
	})
}

// inboxSays reads the inbox of creds on home (acking what it prints) and
// returns each item's text.
func inboxSays(t *testing.T, home, creds string) []string {
	t.Helper()
	out := mustCotal(t, home, "--creds", creds, "inbox", "--json")
	var items []inboxItem
	if err := json.Unmarshal([]byte(out), &items); err != nil {
		t.Fatalf("inbox --json: %v\n%s", err, out)
	}
	var texts []string
	for _, it := range items {
		if len(it.Message.Parts) > 0 {
			texts = append(texts, it.Message.Parts[0].Text)
		}
	}
	return texts
}

// receives reads the inbox of creds until it has held want (in any
// order), then once more: each came exactly once and nothing else did.
func receives(t *testing.T, home, creds string, want ...string) {
	t.Helper()
	var got []string
	waitFor(t, 30*time.Second, func() error {
		got = append(got, inboxSays(t, home, creds)...)
		for _, w := range want {
			if !slices.Contains(got, w) {
				return fmt.Errorf("inbox has %q, still waiting for %q", got, w)
			}
		}
		return nil
	})
	got = append(got, inboxSays(t, home, creds)...)
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("inbox held %q, want %q each once", got, want)
	}
}

// Two workstations share one space: one mesh a hub (--leaf-listen), the
// other its leaf (--leaf with the link credential the hub minted). DMs
// and durable posts cross both ways; with the link cut each side works
// alone, and what each sent meanwhile crosses once when it is back.
func TestLeafPairSharesASpaceAndOutlivesACut(t *testing.T) {
	t.Parallel()
	hub, lap := t.TempDir(), t.TempDir()
	var up struct {
		Leaf struct {
			Listen string `json:"listen"`
		} `json:"leaf"`
	}
	out := mustCotal(t, hub, "up", "--detach", "--json", "--leaf-listen", "127.0.0.1:0")
	if err := json.Unmarshal([]byte(out), &up); err != nil || up.Leaf.Listen == "" {
		t.Fatalf("up --json names no leafnode listener: %v\n%s", err, out)
	}
	link := testutil.NewLink(t, up.Leaf.Listen)
	creds := filepath.Join(lap, "lap.creds")
	out = mustCotal(t, hub, "leaf-creds", "lap", "-o", creds)
	if !strings.Contains(out, "--leaf-creds") {
		t.Fatalf("leaf-creds does not say how the leaf links:\n%s", out)
	}
	started := time.Now()
	out = mustCotal(t, lap, "up", "--detach", "--leaf", "nats://"+link.Addr(), "--leaf-creds", creds)
	if !strings.Contains(out, "leaf of hub") {
		t.Fatalf("up --leaf does not say it is a leaf:\n%s", out)
	}
	linksUp(t, hub, 1)
	linksUp(t, lap, 1)
	t.Logf("leaf up and linked both ways %s after its up began", time.Since(started).Round(time.Millisecond))

	for _, home := range []string{hub, lap} {
		mustCotal(t, home, "channels", "set", "team", "--class", "durable", "--replay", "off")
	}
	alice := mint(t, hub, "alice", "--subscribe", "team", "--allow-publish", "team")
	bob := mint(t, lap, "bob", "--subscribe", "team", "--allow-publish", "team")
	// The first reads join team, durably.
	receives(t, hub, alice.Creds)
	receives(t, lap, bob.Creds)

	mustCotal(t, hub, "send", "dm", "local.bob", "dm from the hub")
	mustCotal(t, lap, "send", "dm", "local.alice", "dm from the leaf")
	mustCotal(t, hub, "--creds", alice.Creds, "send", "msg", "team", "post from the hub")
	mustCotal(t, lap, "--creds", bob.Creds, "send", "msg", "team", "post from the leaf")
	sent := time.Now()
	receives(t, lap, bob.Creds, "dm from the hub", "post from the hub")
	receives(t, hub, alice.Creds, "dm from the leaf", "post from the leaf")
	t.Logf("linked: a DM and a post from each side read on the other %s after the last was sent", time.Since(sent).Round(time.Millisecond))

	link.Cut()
	cut := time.Now()
	linksUp(t, hub, 0)
	linksUp(t, lap, 0)
	t.Logf("cut: status says the link is down on both sides %s after the cut", time.Since(cut).Round(time.Millisecond))
	mustCotal(t, hub, "send", "dm", "local.bob", "dm from the hub while cut")
	mustCotal(t, hub, "--creds", alice.Creds, "send", "msg", "team", "post from the hub while cut")
	mustCotal(t, lap, "send", "dm", "local.alice", "dm from the leaf while cut")
	mustCotal(t, lap, "--creds", bob.Creds, "send", "msg", "team", "post from the leaf while cut")
	// Each side alone still delivers its own.
	mustCotal(t, hub, "send", "dm", "alice", "local on the hub")
	mustCotal(t, lap, "send", "dm", "bob", "local on the leaf")
	receives(t, hub, alice.Creds, "local on the hub")
	receives(t, lap, bob.Creds, "local on the leaf")

	link.Restore()
	back := time.Now()
	linksUp(t, hub, 1)
	linksUp(t, lap, 1)
	receives(t, lap, bob.Creds, "dm from the hub while cut", "post from the hub while cut")
	receives(t, hub, alice.Creds, "dm from the leaf while cut", "post from the leaf while cut")
	t.Logf("link restored: what was sent while cut read on both sides %s later", time.Since(back).Round(time.Millisecond))
}

// The leaf flags are refused, naming what to change, before anything
// starts.
func TestLeafFlagsRefused(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--leaf", "nats://127.0.0.1:7422"}, "leaf-creds"},
		{[]string{"--leaf", "nats://127.0.0.1:7422", "--leaf-listen", "127.0.0.1:0", "--leaf-creds", "x"}, "not both"},
		{[]string{"--leaf-listen", "127.0.0.1:0", "--open"}, "drop --open"},
		{[]string{"--domain", "lap"}, "--leaf-listen"},
		{[]string{"--leaf-listen", "127.0.0.1:0", "--domain", "Lap"}, "lower-case"},
		{[]string{"--leaf", "http://hub:7422", "--leaf-creds", "x"}, "scheme"},
		{[]string{"--leaf", "nats://127.0.0.1:7422", "--leaf-creds", filepath.Join(home, "none.creds")}, "--leaf-creds"},
	} {
		stdout, stderr, code := runCotal(t, home, append([]string{"up", "--detach"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.says) {
			t.Errorf("up --detach %v: exit %d, want 2 saying %q\nstdout: %s\nstderr: %s", c.args, code, c.says, stdout, stderr)
		}
	}
}
