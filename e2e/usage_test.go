package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/modelserver"
	"github.com/cotal-go/cotal/seat/client"
)

// TestClaudeCodeSeatCost: real Claude Code in a seat, against the scripted
// model (100 tokens in and 10 out per reply), takes a DM, runs one Bash
// call and answers; ps --json then carries what its own transcript says:
// tokens, the tool call, the turn and when it last answered (its cost
// Claude Code writes only when the session ends: TestRealTranscripts reads it); its
// persona's budget of 200 tokens is spent, which ps and status --json say.
func TestClaudeCodeSeatCost(t *testing.T) {
	t.Parallel()
	w := newClaudeWorld(t, map[string]any{"permissions": map[string]any{"allow": []string{"Bash"}}}, true)
	file := filepath.Join(w.dir, ".cotal", "agents", "cc.md")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), "agent: claude\n", "agent: claude\nbudget: 200\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	const space = "cost"
	if out, stderr, code := runInEnv(t, home, w.dir, space, w.env, "up", "--detach"); code != 0 {
		t.Fatalf("up: exit %d\n%s%s", code, out, stderr)
	}
	t.Cleanup(func() { runIn2(t, home, w.dir, space, "down", "--with-agents") })
	if out, stderr, code := runIn2(t, home, w.dir, space, "spawn", "cc"); code != 0 || !strings.Contains(out, "ready: cc is up") {
		t.Fatalf("spawn cc: exit %d\n%s\n%s", code, out, stderr)
	}
	w.srv.Chain("cost", modelserver.NewContains("count-me"), modelserver.Use("Bash", `{"command":"echo counted","description":"count"}`), modelserver.Say("done counting"))
	if out, stderr, code := runIn2(t, home, w.dir, space, "send", "dm", "cc", "count-me please"); code != 0 {
		t.Fatalf("send: exit %d\n%s%s", code, out, stderr)
	}
	var u *client.UsageRow
	waitFor(t, 90*time.Second, func() error {
		out, _, _ := runIn2(t, home, w.dir, space, "ps", "--json")
		var cs struct {
			Rows []client.CensusRow `json:"rows"`
		}
		_ = json.Unmarshal([]byte(out), &cs)
		for _, r := range cs.Rows {
			if r.Name == "cc" && r.Usage != nil && r.Usage.ToolCalls >= 1 && r.Usage.OutputTokens >= 20 {
				u = r.Usage
				return nil
			}
		}
		return fmt.Errorf("no usage with the tool call yet:\n%s", out)
	})
	if !w.srv.ChainDone("cost") {
		t.Fatal("the model's script was not played out")
	}
	if u.InputTokens < 200 || u.Turns < 1 || u.LastAnswerMs == 0 || u.Budget != 200 || !u.OverBudget {
		t.Fatalf("usage %+v", u)
	}
	if age := time.Since(time.UnixMilli(u.LastAnswerMs)); age < 0 || age > 2*time.Minute {
		t.Fatalf("the last answer is %s old", age)
	}
	out, _, _ := runIn2(t, home, w.dir, space, "ps")
	if !strings.Contains(out, "cc: ") || !strings.Contains(out, "tool call") || !strings.Contains(out, "OVER its budget of 200 tokens") {
		t.Fatalf("ps does not say what cc cost:\n%s", out)
	}
	out, _, _ = runIn2(t, home, w.dir, space, "status", "--json")
	var st struct {
		Usage []struct {
			Name  string           `json:"name"`
			Usage *client.UsageRow `json:"usage"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st.Usage) != 1 || st.Usage[0].Name != "cc" || st.Usage[0].Usage.ToolCalls < 1 {
		t.Fatalf("status --json usage: %v\n%s", err, out)
	}
}

// TestCodexSeatCost: real Codex in a seat takes a DM, makes one tool call
// and answers; ps --json then carries the tokens, tool call, turn and last
// answer its rollout file says.
func TestCodexSeatCost(t *testing.T) {
	t.Parallel()
	w := newCodexWorld(t, "never", "workspace-write")
	const space = "codexcost"
	home, d := w.up(t, space)
	w.srv.Chain("cost", modelserver.NewContains("count-me"), modelserver.Use("shell", `{"command":["echo","counted"]}`), modelserver.Say("done counting"))
	if out, stderr, code := runIn2(t, home, w.dir, space, "send", "dm", "cx", "count-me please"); code != 0 {
		t.Fatalf("send: exit %d\n%s%s", code, out, stderr)
	}
	var u *client.UsageRow
	waitFor(t, 90*time.Second, func() error {
		out, _, _ := runIn2(t, home, w.dir, space, "ps", "--json")
		var cs struct {
			Rows []client.CensusRow `json:"rows"`
		}
		_ = json.Unmarshal([]byte(out), &cs)
		for _, r := range cs.Rows {
			if r.Name == "cx" && r.Usage != nil && r.Usage.ToolCalls >= 1 && r.Usage.OutputTokens >= 20 && r.Usage.LastAnswerMs != 0 {
				u = r.Usage
				return nil
			}
		}
		return fmt.Errorf("no usage with the tool call yet:\n%s", out)
	})
	if u.InputTokens < 200 || u.Turns < 1 {
		t.Fatalf("usage %+v", u)
	}
	d.waitLine(`›?cx .* [0-9][0-9.]*k? tok`) // its row in SEATS
}
