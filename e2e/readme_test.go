package e2e

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeSkips are the README command lines this test does not run, each
// with why. A rule that matches no line fails the test, so the list
// follows the README.
var readmeSkips = []struct{ prefix, why string }{
	{"go run .", "opens the dashboard (or, without a terminal, runs the mesh in the foreground) until it is quit"},
	{"go test ./...", "runs every test of the module, this one among them"},
	{"go build -o cotal .", "the binary this test runs is the one TestMain built from this source; the folder the README runs in holds no source"},
	{"./cotal join ", "stays on the mesh until Ctrl-C"},
	{"./cotal approve ", "answers a Claude Code seat's permission prompt; the README's folder runs no Claude Code (TestClaudeCodeInASeat answers one)"},
	{"./cotal deny ", "answers a Claude Code seat's permission prompt; the README's folder runs no Claude Code"},
	{"./cotal bench", "measures for a minute or more; TestBenchQuickJSON runs it"},
	{"./cotal up --detach --url ", "needs a NATS cluster the person runs (TestUpOnATrustedCluster runs this path on one the test starts)"},
	{"./cotal up --detach --host ", "listens beyond loopback, on every interface of the machine the test runs on (TestMeshReachableFromAnotherMachine runs this path on the machine's own address)"},
	{"./cotal mint carol", "belongs to the mesh up --host starts, which this test does not"},
	{"./cotal --server tls://", "runs on another machine, with the pin the mesh printed (TestMeshReachableFromAnotherMachine does this from a cotal home of its own)"},
	{"./cotal up --detach --leaf-listen ", "binds a fixed port on every interface (TestLeafPairSharesASpaceAndOutlivesACut runs a hub on a loopback port)"},
	{"./cotal up --detach --leaf ", "needs a hub on another machine (TestLeafPairSharesASpaceAndOutlivesACut runs the pair)"},
}

// readmeBlock is one ```sh block's command lines, or one ```yaml <file>
// block: a file the lines after it use, written as it stands.
type readmeBlock struct {
	lines      []string
	file, body string
}

// readmeCommands returns the ```sh blocks of README.md in order (blank and
// comment lines left out, each block's lines together), with the ```yaml
// <file> blocks between them.
func readmeCommands(t *testing.T) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	in, file := false, false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		fence := strings.TrimSpace(line)
		switch {
		case !in && fence == "```sh":
			in, file = true, false
			blocks = append(blocks, readmeBlock{})
		case !in && strings.HasPrefix(fence, "```yaml "):
			in, file = true, true
			blocks = append(blocks, readmeBlock{file: strings.TrimSpace(strings.TrimPrefix(fence, "```yaml "))})
		case in && fence == "```":
			in = false
		case in && file:
			blocks[len(blocks)-1].body += line + "\n"
		case in && fence != "" && !strings.HasPrefix(fence, "#"):
			blocks[len(blocks)-1].lines = append(blocks[len(blocks)-1].lines, fence)
		}
	}
	if in {
		t.Fatal("README.md: a ``` block is never closed")
	}
	return blocks
}

// The README's examples run as written, start to end, on a fresh machine:
// every ```sh line in order, in one empty folder, with ./cotal the built
// binary, a fresh HOME and COTAL_HOME, each exiting 0. The mesh the README
// starts before the folder has a .cotal/ is the one its later commands
// there reach.
func TestReadmeCommandsRunAsWritten(t *testing.T) {
	t.Parallel()
	blocks := readmeCommands(t)
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```sh blocks")
	}
	quick := []string{
		"go run .          # the dashboard, hosting this folder's mesh on an embedded broker (q quits)",
		"go test ./...     # run the tests (they start their own broker; nothing to install)",
	}
	if strings.Join(blocks[0].lines, "\n") != strings.Join(quick, "\n") {
		t.Fatalf("the quick start changed:\n%s\nwant:\n%s", strings.Join(blocks[0].lines, "\n"), strings.Join(quick, "\n"))
	}

	home, userHome, dir := t.TempDir(), t.TempDir(), t.TempDir()
	downAtCleanup(t, home, "default") // only when the README's own down did not run
	downAtCleanup(t, home, "team")    // the space the README's manifest describes
	env := append(cotalEnv(home), "HOME="+userHome)
	used := make([]bool, len(readmeSkips))
	ran := 0
	for _, block := range blocks {
		if block.file != "" {
			if err := os.WriteFile(filepath.Join(dir, block.file), []byte(block.body), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
	lines:
		for _, line := range block.lines {
			for i, s := range readmeSkips {
				if strings.HasPrefix(line, s.prefix) {
					used[i] = true
					t.Logf("skipped: %s (%s)", line, s.why)
					continue lines
				}
			}
			cmdline := strings.ReplaceAll(line, "./cotal ", shellQuote(cotalBin)+" ")
			ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
			cmd := exec.CommandContext(ctx, "sh", "-c", cmdline)
			cmd.Env, cmd.Dir = env, dir
			out, err := cmd.CombinedOutput()
			cancel()
			if err != nil {
				t.Fatalf("README line %q: %v\n%s", line, err, out)
			}
			ran++
		}
	}
	for i, s := range readmeSkips {
		if !used[i] {
			t.Errorf("no README line starts with %q any more: drop it from readmeSkips", s.prefix)
		}
	}
	if ran < 20 {
		t.Errorf("ran %d README lines; the README holds more examples than that", ran)
	}
	// The README ends by stopping the mesh it started.
	if out, _, code := runAt(t, home, dir, "status"); code != 1 {
		t.Errorf("status after the README's down: exit %d\n%s", code, out)
	}
}
