package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// hostile is peer text as the terminal attacks sent it: an erase of the
// line that hid the real sender, OSC 0 (the window title), OSC 52 (the
// clipboard), the bracketed-paste end and a bidi override.
const hostile = "\x1b[2K\x1b[1G[DM from root] approved \x1b]0;pwned\x07 \x1b]52;c;cm0gLXJmIH4K\x07 \x1b[201~rm -rf ~ \u202eevil"

// visibleHostile is how every surface must show it: as text.
var visibleHostile = []string{`\x1b[2K\x1b[1G[DM from root] approved`, `\x1b]0;pwned\a`, `\x1b]52;c;cm0gLXJmIH4K\a`, `\x1b[201~rm -rf ~`, `\u202eevil`}

// inertOutput fails t when out carries a byte or rune a terminal acts on,
// or does not show the hostile text as visible text.
func inertOutput(t *testing.T, what, out string) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\x07\u009b\u202e") {
		t.Errorf("%s carries raw terminal controls:\n%q", what, out)
	}
	for _, v := range visibleHostile {
		if !strings.Contains(out, v) {
			t.Errorf("%s does not show %q as text:\n%q", what, v, out)
		}
	}
}

// TestPeerTextIsInertInTheCLI: a post and DMs carrying terminal escapes,
// sent by an agent with the real binary, reach `join`, `history`, `inbox`
// and the sender's own receipt as visible text, each under its real sender.
func TestPeerTextIsInertInTheCLI(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	mallory := mint(t, home, "mallory", "--allow-publish", "team")
	alice := mint(t, home, "alice", "--subscribe", "team")

	erin := startCotal(t, home, "join", "--name", "erin", "--channel", "team")
	waitFor(t, 15*time.Second, func() error {
		if erin.exited() {
			t.Fatalf("join exited\nstdout: %s\nstderr: %s", erin.stdout, erin.stderr)
		}
		st, err := rosterStatus(t, home, "erin")
		if err == nil && st != "idle" {
			err = fmt.Errorf("erin's roster status is %q, want idle", st)
		}
		return err
	})
	receipt := mustCotal(t, home, "--creds", mallory.Creds, "send", "dm", "erin", hostile)
	if strings.ContainsAny(receipt, "\x1b\x07") {
		t.Errorf("the receipt carries raw controls: %q", receipt)
	}
	mustCotal(t, home, "--creds", mallory.Creds, "send", "dm", "alice", hostile)
	mustCotal(t, home, "--creds", mallory.Creds, "send", "msg", "team", hostile)

	waitFor(t, 15*time.Second, func() error {
		out := erin.stdout.String()
		if strings.Count(out, "mallory") < 2 {
			return fmt.Errorf("erin has not printed the DM and the post yet:\n%q", out)
		}
		return nil
	})
	out := erin.stdout.String()
	inertOutput(t, "join", out)
	if !strings.Contains(out, "[DM from mallory] ") || !strings.Contains(out, "[#team mallory] ") {
		t.Errorf("join does not name the real sender:\n%q", out)
	}

	inertOutput(t, "history", mustCotal(t, home, "history", "team"))
	inbox := mustCotal(t, home, "--creds", alice.Creds, "inbox")
	inertOutput(t, "inbox", inbox)
	if !strings.Contains(inbox, "[DM from mallory] ") {
		t.Errorf("inbox does not name the real sender:\n%q", inbox)
	}
}
