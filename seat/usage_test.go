package seat_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat/client"
)

// TestSeatUsageFromItsTranscript: a Claude Code seat's hooks name its
// transcript; ps then carries its tokens, cost, tool calls, turns and the
// age of its last answer, read from a transcript in Claude Code 2.1.328's
// own format, and its persona's budget, crossed. A hook naming a file that
// is no transcript, or a symlink to one, is not read.
func TestSeatUsageFromItsTranscript(t *testing.T) {
	h := startMeshWith(t, host.Config{Paths: config.Paths{Space: space, StoreDir: t.TempDir()}, Readiness: 20 * time.Second, HookGrace: hookGrace})
	f := h.fakeClaudePersona(t, "cc", false)
	file := filepath.Join(h.project, ".cotal", "agents", "cc.md")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), "agent: claude\n", "agent: claude\nbudget: 150\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "cc"})
	if res := goal(t, h.c, h.iid, acc.GoalID, 25*time.Second); res.State != ep.GoalSucceeded {
		t.Fatalf("spawn: %s %+v", res.State, res.Error)
	}
	sample, err := os.ReadFile(filepath.Join("..", "transcript", "testdata", "claude-2.1.328.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	put := func(rel string, data []byte) string {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// What a seat might name instead of its transcript: a file elsewhere,
	// a symlink in the right place to it, a relative path.
	elsewhere := put("secret/keys.jsonl", sample)
	link := filepath.Join(home, ".claude", "projects", "p", "link.jsonl")
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{elsewhere, link, "projects/x.jsonl", filepath.Join(home, ".claude", "projects", "p", "..", "..", "secret", "keys.jsonl")} {
		f.hook(fakeCmd{Event: "PostToolUse", Input: map[string]any{"transcript_path": p, "tool_name": "Bash"}})
		if r, _ := row(ps(t, h.c, h.iid), acc.Name); r.Usage != nil && r.Usage.InputTokens != 0 {
			t.Fatalf("the manager read %s as the seat's transcript: %+v", p, r.Usage)
		}
	}

	real := put(".claude/projects/p/session.jsonl", sample)
	f.hook(fakeCmd{Event: "Stop", Input: map[string]any{"transcript_path": real}})
	r := agentRow(t, h, acc.Name, func(r client.Row) error {
		if u := r.Usage; u == nil || u.InputTokens != 200 {
			return fmt.Errorf("usage %+v", r.Usage)
		}
		return nil
	})
	u := r.Usage
	want, _ := time.Parse(time.RFC3339, "2026-12-02T05:01:36.473Z")
	if u.OutputTokens != 20 || u.ToolCalls != 1 || u.Turns != 1 || u.CostUSD != 0.0012000000000000001 || u.LastAnswerMs != want.UnixMilli() {
		t.Fatalf("usage %+v", u)
	}
	if u.Budget != 150 || !u.OverBudget {
		t.Fatalf("a budget of 150 tokens with 220 spent: %+v", u)
	}
}
