package e2e

import (
	"strings"
	"testing"
)

// TestPickerAndPsSayWhatIsTypedInAndWhatIsInvalid: the spawn picker says
// of each persona whether its seats get messages typed in, lists one whose
// name cannot name a seat as invalid with the reason (it was listed, then
// refused), and refuses it there; ps has the same word per seat.
func TestPickerAndPsSayWhatIsTypedInAndWhatIsInvalid(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := project(t, map[string]string{
		"shell":         "agent: command\ncommand: sh",
		"listener":      "agent: command\ncommand: cat\ninject: true",
		"code-reviewer": "agent: command\ncommand: sh",
	})
	d := startDashboardIn(t, home, dir, "--space", "seats")
	d.waitScreen("HOSTING", "SEATS · 0")
	d.keys("s")
	d.waitScreen("SPAWN A SEAT")
	d.waitLine(`› code-reviewer +invalid: "code-reviewer" is not one token`)
	d.waitLine(`^ +listener +command · messages typed in`)
	d.waitLine(`^ +shell +command · no messages typed in \(it reads cotal inbox; inject: true types them\)`)
	d.keys("Enter")
	d.waitScreen("cannot spawn code-reviewer:", "SPAWN A SEAT")
	d.keys("Down", "Enter")
	d.waitScreen("listener is up and on the mesh")
	d.keys("s")
	d.waitScreen("SPAWN A SEAT")
	d.keys("Down", "Down", "Enter")
	d.waitScreen("shell is up and on the mesh")

	out, stderr, code := runIn(t, home, dir, "ps")
	if code != 0 {
		t.Fatalf("ps: exit %d: %s", code, stderr)
	}
	lines := strings.Split(out, "\n")
	col := strings.Index(lines[0], "TYPED-IN")
	if col < 0 {
		t.Fatalf("ps has no TYPED-IN column:\n%s", out)
	}
	want := map[string]string{"listener": "yes", "shell": "no"}
	for _, l := range lines[1:] {
		name, _, _ := strings.Cut(l, " ")
		if w, ok := want[name]; ok {
			if got := strings.Fields(l[col:])[0]; got != w {
				t.Errorf("ps says %s for %s, want %s:\n%s", got, name, w, out)
			}
			delete(want, name)
		}
	}
	if len(want) > 0 || !strings.Contains(out, "shell gets no messages typed in: it reads them with `cotal inbox`") {
		t.Errorf("ps does not say of every seat whether it gets messages typed in:\n%s", out)
	}
}

// TestSpawnRefusalsAreSentencesAndExit2: a spawn refused for bad input (no
// such persona, a name that is not a token, a file with a value of the
// wrong type, a --name that is not a token, a taken name) exits 2 with one
// sentence naming what to fix, and no wire code (it printed
// `✗ failed-precondition: ...` and exited 1).
func TestSpawnRefusalsAreSentencesAndExit2(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := upWithShell(t, home, map[string]string{
		"shell":         "agent: command\ncommand: sh",
		"code-reviewer": "agent: command\ncommand: sh",
		"typed":         "agent: command\ncommand: sh\ninject: yes",
		"readiness":     "agent: command\ncommand: sh\nready: ouput",
		"arguments":     "agent: command\ncommand: sh\nargs: \"-c echo hi\"",
	}, "shell")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, `cannot spawn nosuch: no such persona "nosuch"`},
		{[]string{"code-reviewer"}, `persona "code-reviewer" cannot name a seat`},
		{[]string{"typed"}, `typed.md:5: inject must be true or false, not "yes"`},
		{[]string{"readiness"}, `readiness.md:5: ready "ouput" is not mcp or output`},
		{[]string{"arguments"}, `arguments.md:5: args must be a list such as [a, b], not a scalar`},
		{[]string{"shell", "--name", "a-b"}, `--name "a-b": a seat's name is one token`},
		{[]string{"shell", "--name", "shell"}, `cannot spawn shell: the name "shell" is taken`},
	} {
		out, stderr, code := runIn(t, home, dir, append([]string{"spawn"}, tc.args...)...)
		if code != 2 || out != "" || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "✗") ||
			strings.Contains(stderr, "precondition") || strings.Contains(stderr, "bad-request") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("spawn %v: exit %d\nstdout %q\nstderr %q\nwant exit 2 and one sentence with %q", tc.args, code, out, stderr, tc.want)
		}
	}
}
