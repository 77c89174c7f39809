package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/issue"
)

// These tests drive the dashboard at the sizes people use, 160x45 and
// 80x24, for what a person must never miss.

// operator is how every reader names the operator's posts: its actor.
func operator() string { return issue.OperatorPrincipal().Actor }

// personaProject is a project folder with the personas given as
// frontmatter lines.
func personaProject(t *testing.T, personas map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	agents := filepath.Join(dir, ".cotal", "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, front := range personas {
		body := fmt.Sprintf("---\nname: %s\n%s\n---\n", name, front)
		if err := os.WriteFile(filepath.Join(agents, name+".md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The operator's posts, made from the CLI or from another dashboard, show
// live in every dashboard, under the one name every reader gives them; so
// do its DMs and tasks, each once, wherever they were sent from.
func TestDashboardShowsTheOperatorsPostsInEveryDashboard(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	big := startSized(t, home, fakeHome, 160, 45)
	big.waitScreen("HOSTING", "nothing waiting - all clear")
	small := startSized(t, home, fakeHome, 80, 24)
	small.waitScreen("CLIENT")
	op := operator()

	mustCotal(t, home, "send", "msg", "general", "posted from the cli")
	big.waitScreen("#general " + op + ": posted from the cli")
	small.waitScreen("#general " + op + ": posted from the cli")

	big.keys("c")
	big.waitScreen("send>")
	big.typeText("#general posted from the big dashboard")
	big.keys("Enter")
	big.waitScreen("→ #general: stored seq")
	small.waitScreen("#general " + op + ": posted from the big dashboard")
	big.waitScreen("#general " + op + ": posted from the big dashboard")
	if s := big.screen(); strings.Contains(s, " you: ") || strings.Count(s, "posted from the big dashboard") != 1 {
		t.Errorf("the sending dashboard names its own post differently, or twice:\n%s", s)
	}

	mint(t, home, "alice")
	big.keys("c")
	big.typeText("@alice a word for alice")
	big.keys("Enter")
	big.waitScreen("DM " + op + " → alice: a word for alice")
	big.keys("c")
	big.typeText("!reviewer look at the parser")
	big.keys("Enter")
	big.waitScreen("@reviewer " + op + ": look at the parser")
	small.waitScreen("DM "+op+" → alice: a word for alice", "@reviewer "+op+": look at the parser")

	mustCotal(t, home, "send", "dm", "alice", "from the cli to alice")
	mustCotal(t, home, "send", "ask", "reviewer", "a task from the cli")
	for _, d := range []*tmuxCotal{big, small} {
		d.waitScreen("DM "+op+" → alice: from the cli to alice", "@reviewer "+op+": a task from the cli")
	}
	if s := big.screen(); strings.Count(s, "a word for alice") != 1 || strings.Count(s, "look at the parser") != 1 {
		t.Errorf("the sending dashboard shows its own DM or task twice:\n%s", s)
	}
	small.keys("q")
	small.waitScreen("EXIT=0")
	big.quit()
}

// A seat that crashes needs its person: NEEDS YOU counts it, in red with
// '!', with how it ended; a seat a stop ended is a grey cross and needs
// nobody; a crash can be removed from the list; messages held while a
// person's line is unsent are said on the seat's row and in the lane.
func TestDashboardNeedsYouForACrashAndHeldMessagesNotForAStop(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	const space = "needs"
	dir := personaProject(t, map[string]string{
		"crash": "agent: command\ncommand: sh\nargs: [\"-c\", \"echo booting; sleep 2; exit 3\"]",
		"shell": "agent: command\ncommand: sh",
		"inj":   "agent: command\ncommand: sh\ninject: true",
	})
	d := startSized(t, home, dir, 160, 45, "--space", space)
	d.waitScreen("HOSTING", "SEATS · 0")
	for _, p := range []string{"crash", "shell", "inj"} {
		if _, stderr, code := runIn2(t, home, dir, space, "spawn", p); code != 0 {
			t.Fatalf("spawn %s: exit %d: %s", p, code, stderr)
		}
	}
	d.waitLine(`^! +›?crash +exited 3 `)
	d.waitLine(`│! crash  crashed \d+s  exited 3`)
	d.waitScreen("NEEDS YOU · 1", "crashed (exited 3)")

	// A stop from the CLI is no crash.
	if _, stderr, code := runIn2(t, home, dir, space, "stop", "shell"); code != 0 {
		t.Fatalf("stop shell: exit %d: %s", code, stderr)
	}
	d.waitLine(`^⨯ +›?shell +killed `)
	if s := d.screen(); !strings.Contains(s, "NEEDS YOU · 1") {
		t.Errorf("a stopped seat entered NEEDS YOU:\n%s", s)
	}

	// A person leaves a line unsent in inj's terminal; a DM for inj is
	// held, and the dashboard says so.
	att := startSized(t, home, dir, 100, 30, "--space", space, "attach", "inj")
	att.waitLine(`^[#$]`) // the seat's shell prompt
	att.typeText("echo half a line")
	att.waitScreen("echo half a line")
	mustCotal(t, home, "--space", space, "send", "dm", "inj", "a task for inj")
	d.waitLine(`^✎ +›?inj +running .* held: person's line unsent, 1 waiting`)
	d.waitLine(`│✎ inj  held \d+s  person's line unsent, 1 waiting`)
	d.waitScreen("NEEDS YOU · 2")

	// The crash is removed from the list at once; a running seat is not.
	d.keys("Tab", "g")
	d.waitLine(`^! ›crash `)
	d.keys("d")
	d.waitScreen("removed crash (exited 3) from the list", "1 exited removed from view", "NEEDS YOU · 1")
	d.waitLine(`^✎ +›inj +running`) // the next row: inj
	d.keys("d")
	d.waitScreen("seat inj is running: only a seat that has exited is removed")
	d.waitLine(`^✎ +›inj +running`)
	d.quit()
}

// quit quits a hosting dashboard as a person does, saying yes when it asks
// about live seats, and waits for it to exit.
func (tc *tmuxCotal) quit() {
	tc.t.Helper()
	tc.keys("q")
	waitFor(tc.t, screenWait, func() error {
		s := tc.screen()
		if strings.Contains(s, "and quit? (y) / cancel (n)") {
			tc.keys("y")
		}
		if !strings.Contains(s, "EXIT=0") {
			return fmt.Errorf("the dashboard has not exited:\n%s", s)
		}
		return nil
	})
}

// runIn2 runs cotal from dir (where its personas are) in space.
func runIn2(t testing.TB, home, dir, space string, args ...string) (string, string, int) {
	t.Helper()
	return runInEnv(t, home, dir, space, nil, args...)
}

// runInEnv is runIn2 with extra KEY=VALUE pairs in cotal's environment.
func runInEnv(t testing.TB, home, dir, space string, extra []string, args ...string) (string, string, int) {
	t.Helper()
	return runFor(t, commandTimeout, home, dir, space, extra, args...)
}

// spawnTimeout bounds a spawn followed to its outcome: past opencode's
// own readiness bound (3 min) and the follow margin.
const spawnTimeout = 4 * time.Minute

// runFor is runInEnv bounded by limit rather than commandTimeout.
func runFor(t testing.TB, limit time.Duration, home, dir, space string, extra []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, cotalBin, append([]string{"--space", space}, args...)...)
	cmd.Env, cmd.Dir = append(cotalEnv(home), extra...), dir
	cmd.WaitDelay = 5 * time.Second
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("cotal %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// At 80 columns a person reads every key, sees a receipt go and the key
// hints come back, finds an error again in the message log, and reads a
// post too long for the screen in full.
func TestDashboardAt80ColumnsKeepsNothingFromThePerson(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	d := startSized(t, home, fakeHome, 80, 24)
	d.waitScreen("HOSTING", "? all keys")

	d.keys("?")
	d.waitScreen("KEYS", "remove an exited seat", "message log", "read a feed post in full", "type into the seat", "quit", "more ↓")
	d.keys("Escape")
	d.waitGoneFromScreen("KEYS")

	d.keys("c")
	d.typeText("#general a post that is much too long for eighty columns, so its end is cut off at the edge of the screen: THE END")
	d.keys("Enter")
	d.waitScreen("→ #general: stored seq")
	d.waitGoneFromScreen("→ #general: stored seq")
	d.waitScreen("? all keys")

	d.keys("c")
	d.typeText("@nobody are you there")
	d.keys("Enter")
	d.waitScreen("! 1 error · m shows them") // while the input line shows it, and after
	d.keys("m")
	d.waitScreen("MESSAGE LOG", `! @nobody: no peer "nobody"`, "→ #general: stored seq")
	d.keys("Escape")
	d.waitGoneFromScreen("m shows them")

	if strings.Contains(d.screen(), "THE END") {
		t.Fatal("the long post fits the screen: nothing to open")
	}
	d.keys("Tab")
	d.waitScreen("o/enter read a feed post in full")
	d.keys("Enter")
	d.waitScreen("POST", "from "+operator(), "THE END")
	d.keys("Escape")
	d.waitGoneFromScreen("POST")
	d.quit()
}

// A person picks a seat in the roster; a spawn they asked for earlier
// arrives and re-sorts every list; the line they type goes to the seat
// they picked.
func TestDashboardTypesIntoThePickedSeatWhateverReSorts(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	const space = "pick"
	dir := personaProject(t, map[string]string{
		"shell": "agent: command\ncommand: sh",
		"abc":   "agent: command\ncommand: sh\nargs: [\"-c\", \"sleep 2; echo abc is up; exec sh\"]",
	})
	d := startSized(t, home, dir, 160, 45, "--space", space)
	d.waitScreen("HOSTING", "SEATS · 0")
	for range 2 {
		if _, stderr, code := runIn2(t, home, dir, space, "spawn", "shell"); code != 0 {
			t.Fatalf("spawn shell: exit %d: %s", code, stderr)
		}
	}
	d.waitLine(`^○ +›?shell_2 `)
	d.keys("g")
	d.waitLine(`^○ ›shell `)
	d.keys("j")
	d.waitLine(`^○ ›shell_2 `)
	d.keys("s")
	d.waitScreen("SPAWN A SEAT", "› abc")
	d.keys("Enter")
	d.waitScreen("abc is up and on the mesh")
	d.waitLine(`^○ +abc `) // first in the roster now, above the pick
	d.waitLine(`^○ ›shell_2 `)
	d.keys("i")
	d.waitScreen("type into shell_2>")
	d.typeText("echo picked-$((6*7))")
	d.keys("Enter")
	d.waitLine(`→ sent \d+ bytes to shell_2`)
	if out := mustCotal(t, home, "--space", space, "screen", "shell_2"); !strings.Contains(out, "picked-42") {
		t.Errorf("shell_2's screen lacks the line:\n%s", out)
	}
	if out := mustCotal(t, home, "--space", space, "screen", "abc"); strings.Contains(out, "picked") {
		t.Errorf("the line went to abc:\n%s", out)
	}
	d.quit()
}
