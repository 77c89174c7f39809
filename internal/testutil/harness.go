package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Where the tests find the real harnesses (Claude Code, Codex, opencode):
// .ci/run installs them, pinned, and sets these.
const (
	// HarnessBinEnv names the directory holding the harness binaries.
	HarnessBinEnv = "COTAL_HARNESS_BIN"
	// RequireHarnessesEnv makes a test without its harness fail, not skip.
	RequireHarnessesEnv = "COTAL_REQUIRE_HARNESSES"
	// HarnessLogEnv names the install's log, quoted when it failed.
	HarnessLogEnv = "COTAL_HARNESS_INSTALL_LOG"
)

// Harness is the path of a real harness binary (claude, codex, opencode)
// from HarnessBinEnv. Without it the test skips, or fails when
// RequireHarnessesEnv asks for the harness tests (CI), quoting why the
// install failed.
func Harness(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv(HarnessBinEnv)
	path := filepath.Join(dir, name)
	why := ""
	switch {
	case dir == "":
		why = HarnessBinEnv + " is not set (.ci/run installs the harnesses and sets it)"
	default:
		if _, err := exec.LookPath(path); err != nil {
			why = name + " is not installed in " + dir + ": " + err.Error()
		} else if out, err := exec.Command(path, "--version").CombinedOutput(); err != nil {
			why = path + " --version failed: " + err.Error() + ": " + strings.TrimSpace(string(out))
		}
	}
	if why == "" {
		return path
	}
	if os.Getenv(RequireHarnessesEnv) != "" {
		if log := os.Getenv(HarnessLogEnv); log != "" {
			if b, err := os.ReadFile(log); err == nil && len(b) > 0 {
				why += "\nthe harness install said:\n" + tail(string(b), 20)
			}
		}
		t.Fatalf("%s; %s asks for the harness tests", why, RequireHarnessesEnv)
	}
	t.Skipf("%s: the tests of real harnesses need it", why)
	return ""
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
