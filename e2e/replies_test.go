package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestRepliesToThePersonShowInEveryDashboard: `@fake please review` from
// the hosting dashboard; the agent answers with cotal_dm to the operator.
// The answer shows in the feed of the hosting dashboard and of a client
// dashboard, each counts it unread in NEEDS YOU, deliveries says what
// holds it without calling the operator offline, and reading it in one
// dashboard (r) acks it for both. Nothing showed, and deliveries said the
// operator was offline.
func TestRepliesToThePersonShowInEveryDashboard(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{
		"fake": fmt.Sprintf("agent: command\ncommand: %s\nready: mcp\ninject: true", fakeAgentBin),
	})
	host := startDashboardIn(t, home, dir, "--space", "seats")
	host.waitScreen("HOSTING", "SEATS · 0")
	if out, stderr, code := runIn(t, home, dir, "spawn", "fake"); code != 0 || !strings.Contains(out, "ready: fake is up") {
		t.Fatalf("spawn fake: exit %d\n%s\n%s", code, out, stderr)
	}
	client := startClient(t, home, dir, 120, 40, "--space", "seats")
	client.waitScreen("CLIENT")

	host.keys("c")
	host.typeText("@fake please review")
	host.keys("Enter")
	for _, d := range []*tmuxCotal{host, client} {
		d.waitLine(`DM fake → you: done: please review`)
		d.waitLine(`✉ you +unread \S+ +r reads 1 from fake`)
	}

	out, stderr, code := runIn(t, home, dir, "deliveries", "--pending", "--json")
	if code != 0 {
		t.Fatalf("deliveries: exit %d\n%s\n%s", code, out, stderr)
	}
	var dl struct {
		Rows []struct {
			Stored, Taken int
			Presence, Why string
			Operator      bool
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &dl); err != nil {
		t.Fatalf("deliveries: %v\n%s", err, out)
	}
	if len(dl.Rows) != 1 || !dl.Rows[0].Operator || dl.Rows[0].Stored+dl.Rows[0].Taken != 1 ||
		strings.Contains(dl.Rows[0].Presence+dl.Rows[0].Why, "offline") || !strings.Contains(dl.Rows[0].Why, "every dashboard shows them") {
		t.Fatalf("deliveries of the operator's unread reply:\n%s", out)
	}

	client.keys("r")
	client.waitScreen("REPLIES TO YOU", "done: please review")
	for _, d := range []*tmuxCotal{host, client} {
		d.waitGoneFromScreen("r reads 1")
	}
	client.keys("q")
	client.waitGoneFromScreen("REPLIES TO YOU")
	if out, _, _ := runIn(t, home, dir, "deliveries", "--pending"); !strings.Contains(out, "Nothing waits") {
		t.Errorf("deliveries after the read:\n%s", out)
	}
	// Read once: the hosting dashboard still shows the reply in its feed.
	host.waitLine(`DM fake → you: done: please review`)
}

// TestADMDroppedWithItsRecipientsLifecycleSaysSo: a DM its recipient
// never read when its lifecycle ended (a stop) is dropped, and the
// sender's receipt and the dashboard say so and why. It vanished.
func TestADMDroppedWithItsRecipientsLifecycleSaysSo(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, shellPersona, "shell") // a command seat: it reads its inbox itself
	d := startClient(t, home, dir, 160, 40, "--space", "seats")
	d.waitScreen("CLIENT")
	d.keys("c")
	d.typeText("@shell from the dashboard")
	d.keys("Enter")
	d.waitLine(`DM \S+ → shell: from the dashboard`)

	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	wait := exec.CommandContext(ctx, cotalBin, "--space", "seats", "send", "dm", "shell", "from the CLI", "--wait", "acked", "--timeout", "60s")
	var out, errb lockedBuffer
	wait.Env, wait.Dir, wait.Stdout, wait.Stderr = cotalEnv(home), dir, &out, &errb
	wait.WaitDelay = 5 * time.Second
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- wait.Wait() }()
	waitFor(t, screenWait, func() error {
		if !strings.Contains(errb.String(), "waiting up to") {
			return fmt.Errorf("the send has not started waiting: %s%s", out.String(), errb.String())
		}
		return nil
	})
	if _, stderr, code := runIn(t, home, dir, "stop", "shell"); code != 0 {
		t.Fatalf("stop shell: %s", stderr)
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the waiting send did not end")
	}
	if !strings.Contains(out.String(), "shell: reached acked (dropped: the recipient's lifecycle ended") {
		t.Errorf("the sender's receipt does not say the DM was dropped and why:\n%s%s", out.String(), errb.String())
	}
	d.waitScreen("to shell was dropped") // the status bar, then the log in full
	d.keys("m")
	d.waitScreen("MESSAGE LOG")
	d.waitLine(`to shell was dropped: the recipient's lifecycle ended`)
}
