package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestScreenUntil: `cotal screen --until` prints the first screen that
// shows the text and exits 0; one that never shows it prints the last
// screen and exits 1 saying so (--json: matched false); --until with
// --follow, --wait without --until and a wait past 30s are bad input.
func TestScreenUntil(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, shellPersona, "shell")
	if _, stderr, code := runIn(t, home, dir, "input", "shell", "sleep 0.5; echo screen-un''til-mark"); code != 0 {
		t.Fatalf("input: %s", stderr)
	}
	out, stderr, code := runIn(t, home, dir, "screen", "shell", "--until", "screen-until-mark")
	if code != 0 || !strings.Contains(out, "screen-until-mark") {
		t.Fatalf("screen --until: exit %d\n%s%s", code, out, stderr)
	}

	out, stderr, code = runIn(t, home, dir, "screen", "shell", "--until", "never-on-it", "--wait", "300ms")
	if code != 1 || !strings.Contains(out, "screen-until-mark") || !strings.Contains(stderr, `"never-on-it" is not on shell's screen`) {
		t.Fatalf("screen --until for what never comes: exit %d\n%s%s", code, out, stderr)
	}
	out, _, code = runIn(t, home, dir, "screen", "shell", "--until", "never-on-it", "--wait", "100ms", "--json")
	var r struct {
		Screen  string
		Matched *bool
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 1 || r.Matched == nil || *r.Matched || !strings.Contains(r.Screen, "screen-until-mark") {
		t.Fatalf("screen --until --json: exit %d, %v\n%s", code, err, out)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"screen", "shell", "--until", "x", "--follow"}, "give one"},
		{[]string{"screen", "shell", "--wait", "1s"}, "give --until TEXT"},
		{[]string{"screen", "shell", "--until", "x", "--wait", "1m"}, "1ms to 30s"},
		{[]string{"screen", "shell", "--until", ""}, "say what text"},
	} {
		if _, stderr, code := runIn(t, home, dir, c.args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("cotal %s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
}
