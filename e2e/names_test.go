package e2e

import (
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// TestNamesThatCannotBeTakenWithTheBinary: the operator's name and the
// mesh's own service names are refused at mint (bad input, exit 2) and at
// spawn, by a spawner's credential with the real binary; the operator's
// commands keep working after. Creds minted without --out stay under the
// store and --creds names them; with --out outside it mint warns.
func TestNamesThatCannotBeTakenWithTheBinary(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{"shell": "agent: command\ncommand: sh"})
	if _, stderr, code := runIn(t, home, dir, "up", "--detach"); code != 0 {
		t.Fatalf("up: %s", stderr)
	}
	t.Cleanup(func() { runIn(t, home, dir, "down", "--with-agents") })
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	op := strings.ReplaceAll(me.Username, "-", "_")

	out, stderr, code := runIn(t, home, dir, "mint", "spawner", "--capability", "spawn")
	if code != 0 || strings.Contains(stderr, "warning") {
		t.Fatalf("mint spawner: exit %d\n%s%s", code, out, stderr)
	}
	for _, name := range []string{op, strings.ToUpper(op), "cotal_delivery", "manager"} {
		if _, stderr, code := runIn(t, home, dir, "mint", name); code != 2 || !strings.Contains(stderr, "reserved") {
			t.Errorf("mint %s: exit %d, stderr %q; want 2 and why it is reserved", name, code, stderr)
		}
		out, stderr, code := runIn(t, home, dir, "--creds", "spawner", "spawn", "shell", "--name", name)
		if code == 0 || !strings.Contains(stderr, name) {
			t.Errorf("spawn --name %s by a spawner: exit %d\n%s%s", name, code, out, stderr)
		}
	}
	if out, stderr, code := runIn(t, home, dir, "ps"); code != 0 {
		t.Fatalf("the operator's ps after the refusals: exit %d\n%s%s", code, out, stderr)
	}
	if out, stderr, code := runIn(t, home, dir, "--creds", "spawner", "inbox"); code != 0 {
		t.Fatalf("--creds spawner (kept under the store): exit %d\n%s%s", code, out, stderr)
	}

	outside := filepath.Join(dir, "mallory.creds")
	if _, stderr, code := runIn(t, home, dir, "mint", "mallory", "--out", outside); code != 0 || !strings.Contains(stderr, "warning: "+outside) || !strings.Contains(stderr, "a seat can read it") {
		t.Errorf("mint --out into the project: exit %d, stderr %q; want a warning", code, stderr)
	}
}
