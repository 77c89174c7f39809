package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// waitReceipt is `cotal send ... --wait <rung> --json` as a test reads it.
type waitReceipt struct {
	ID       string `json:"id"`
	Seq      uint64 `json:"seq"`
	Wait     string `json:"wait"`
	Reached  bool   `json:"reached"`
	Progress []struct {
		To       string `json:"to"`
		Reached  string `json:"reached"`
		Latest   string `json:"latest"`
		Why      string `json:"why"`
		Injected bool   `json:"injected"`
	} `json:"progress"`
}

// deliveriesJSON is `cotal deliveries --json`.
type deliveriesJSON struct {
	Rows []struct {
		Name   string `json:"name"`
		Seat   string `json:"seat"`
		Stored int    `json:"stored"`
		Taken  int    `json:"taken"`
		Why    string `json:"why"`
	} `json:"rows"`
}

// TestAFakeAgentIsWokenAndAnswers: a seat running a stand-in coding agent
// gets a DM injected into its terminal, answers it through its own
// `cotal mcp`, and the sender's receipt walks every rung to acked.
func TestAFakeAgentIsWokenAndAnswers(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{
		"fake":  fmt.Sprintf("agent: command\ncommand: %s\nready: mcp\ninject: true", fakeAgentBin),
		"plain": "agent: command\ncommand: sh",
	})
	if _, stderr, code := runIn(t, home, dir, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })

	// Ready means its MCP client connected to its cotal mcp.
	out, stderr, code := runIn(t, home, dir, "spawn", "fake")
	if code != 0 || !strings.Contains(out, "ready: fake is up") {
		t.Fatalf("spawn fake: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = runIn(t, home, dir, "send", "dm", "fake", "rename the widget", "--wait", "acked", "--timeout", "40s", "--json")
	if code != 0 {
		t.Fatalf("send --wait acked: exit %d\n%s\n%s", code, out, stderr)
	}
	var r waitReceipt
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("receipt: %v\n%s", err, out)
	}
	if !r.Reached || len(r.Progress) != 1 || r.Progress[0].Reached != "acked" || !r.Progress[0].Injected || !strings.HasSuffix(r.Progress[0].To, ".fake") {
		t.Fatalf("the receipt did not follow the DM to acked through injection: %+v", r)
	}
	// The agent read the block off its terminal and answered through MCP.
	waitFor(t, 30*time.Second, func() error {
		out, _, _ := runIn(t, home, dir, "inbox", "--json")
		for _, it := range parseInbox(t, out) {
			if it.text() == "done: rename the widget" {
				return nil
			}
		}
		return fmt.Errorf("no answer from fake yet: %s", out)
	})
	screen, _, _ := runIn(t, home, dir, "screen", "fake")
	if !strings.Contains(screen, "fakeagent: replied to") {
		t.Fatalf("the fake agent's screen does not show its reply:\n%s", screen)
	}

	// A command seat that does not inject keeps the DM taken: the wait
	// gives up saying so, and deliveries says why.
	if out, stderr, code := runIn(t, home, dir, "spawn", "plain"); code != 0 {
		t.Fatalf("spawn plain: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = runIn(t, home, dir, "send", "dm", "plain", "nobody types this", "--wait", "injected", "--timeout", "3s")
	if code != 1 || !strings.Contains(out, "plain: reached taken") || !strings.Contains(stderr, "gave up after 3s") {
		t.Fatalf("send --wait injected to a seat that does not inject: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = runIn(t, home, dir, "deliveries", "--pending", "--json")
	if code != 0 {
		t.Fatalf("deliveries: exit %d\n%s\n%s", code, out, stderr)
	}
	var d deliveriesJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("deliveries: %v\n%s", err, out)
	}
	if len(d.Rows) != 1 || d.Rows[0].Name != "plain" || d.Rows[0].Taken != 1 || !strings.Contains(d.Rows[0].Why, "reads its inbox itself") {
		t.Fatalf("deliveries --pending: %+v", d.Rows)
	}
	out, _, _ = runIn(t, home, dir, "deliveries")
	if !strings.Contains(out, "fake") || !strings.Contains(out, "reads its inbox itself") {
		t.Fatalf("deliveries table:\n%s", out)
	}
	// A bad rung is a usage error, and nothing is sent.
	if _, stderr, code := runIn(t, home, dir, "send", "dm", "plain", "x", "--wait", "read"); code != 2 || !strings.Contains(stderr, "not a rung") {
		t.Fatalf("--wait read: exit %d %s", code, stderr)
	}
}
