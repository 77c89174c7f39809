// Package e2e runs the real cotal binary, built once per test run, against
// temporary data dirs: the detached mesh, the CLI's exit codes and messages,
// and a startup benchmark against a bare nats-server baseline.
//
// Every test gets its own COTAL_HOME and a fake HOME, so nothing here reads
// or writes the real user's data. Every `cotal up` a test runs is paired
// with a `cotal down` in its cleanup, so no background mesh outlives the test
// that started it, even a failed one.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/testutil"
	"github.com/cotal-go/cotal/seat/sandbox"
)

// cotalBin is the binary TestMain builds; fakeHome is the HOME every run of
// it sees; fakeAgentBin is the stand-in coding agent of testdata/fakeagent.
var cotalBin, fakeHome, fakeAgentBin string

// commandTimeout bounds one cotal invocation. `up --detach` waits at most 30 s
// for its child by default, so this is well above any healthy run.
const commandTimeout = 90 * time.Second

func TestMain(m *testing.M) {
	sandbox.Main() // an in-process mesh (the startup benchmark) launches seats through this binary
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "cotal-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	// /proc/<pid>/exe holds the resolved path; leftoverProcesses compares to it.
	if tmp, err = filepath.EvalSymlinks(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	cotalBin = filepath.Join(tmp, "cotal")
	fakeHome = filepath.Join(tmp, "home")
	if err := os.Mkdir(fakeHome, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if err := buildCotal(cotalBin, "."); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	fakeAgentBin = filepath.Join(tmp, "fakeagent")
	if err := buildCotal(fakeAgentBin, "./e2e/testdata/fakeagent"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	// Everything the tests start sees TMPDIR under tmp: their temp dirs
	// (t.TempDir), the meshes, the seats (TMPDIR is on a seat's
	// allow-list), the tmux servers and what runs in their panes. That is
	// how the leak check below finds them.
	if err := os.Setenv("TMPDIR", tmp); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	parallelByDefault()
	code := m.Run()
	// The cleanups should have stopped every mesh, seat and tmux server;
	// a survivor is a bug in `cotal down` or in a test, and it fails the
	// run.
	if left := leftoverProcesses(cotalBin, tmp); len(left) > 0 {
		fmt.Fprintln(os.Stderr, "e2e: processes still running after the tests (killing them):")
		for _, p := range left {
			fmt.Fprintf(os.Stderr, "  pid %d: %s\n", p.pid, p.cmdline)
			_ = syscall.Kill(p.pid, syscall.SIGCONT)
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		if code == 0 {
			code = 1
		}
	}
	return code
}

// e2eParallel is how many tests run at once unless -parallel says. These
// tests spend their time waiting on other processes (a mesh starting, a
// seat's output, a stall bound running out), not computing, so the
// default of one per core leaves the machine idle behind the slowest
// waits.
const e2eParallel = 6

// parallelByDefault sets -test.parallel to e2eParallel unless the command
// line set it.
func parallelByDefault() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(e2eParallel))
	}
}

// buildCotal builds a main package of the module (pkg, relative to the
// module root: the parent of this package's directory, where `go test`
// runs us) into out.
func buildCotal(out, pkg string) error {
	root, err := filepath.Abs("..")
	if err != nil {
		return err
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !bytes.Contains(mod, []byte("module github.com/cotal-go/cotal\n")) {
		return fmt.Errorf("%s is not the cotal module root (go.mod: %v)", root, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, b)
	}
	trackSources(root)
	return nil
}

// trackSources opens every source file of the module from this process.
// The go build above reads them in a child, which go test's result cache
// cannot see; opening them here makes a change to any of them rerun these
// tests instead of replaying a stale cached pass.
func trackSources(root string) {
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if n := d.Name(); strings.HasSuffix(n, ".go") || n == "go.mod" || n == "go.sum" {
			if f, err := os.Open(path); err == nil {
				f.Close()
			}
		}
		return nil
	})
}

// leftover is a process a test left running.
type leftover struct {
	pid     int
	cmdline string
}

// leftoverProcesses lists the live processes, other than this one, running
// the binary at exe or started with TMPDIR=tmp. Zombies have no exe link
// and no environment and are not listed: they are already gone.
func leftoverProcesses(exe, tmp string) []leftover {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	mark := []byte("TMPDIR=" + tmp + "\x00")
	var left []leftover
	for _, de := range ents {
		pid, err := strconv.Atoi(de.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		dir := filepath.Join("/proc", de.Name())
		target, _ := os.Readlink(filepath.Join(dir, "exe"))
		env, _ := os.ReadFile(filepath.Join(dir, "environ"))
		if target != exe && !bytes.HasPrefix(env, mark) && !bytes.Contains(env, append([]byte{0}, mark...)) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		left = append(left, leftover{pid: pid, cmdline: strings.TrimSpace(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))})
	}
	return left
}

// cotalEnv is the environment of a cotal run: ours minus anything that
// could point it at real data, plus COTAL_HOME=home and the fake HOME.
func cotalEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "COTAL_") || k == "HOME" || k == "XDG_DATA_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "COTAL_HOME="+home, "HOME="+fakeHome)
}

// runCotal runs the cotal binary with args and COTAL_HOME=home, from a
// directory with no project .cotal folder above it, and returns what it
// printed and its exit code. A `cotal up` also registers a `cotal down` of
// the same space in t's cleanup.
func runCotal(t testing.TB, home string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if len(args) > 0 && args[0] == "up" {
		downOnCleanup(t, home, args[1:])
	}
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, cotalBin, args...)
	cmd.Env = cotalEnv(home)
	cmd.Dir = fakeHome
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		t.Fatalf("cotal %s: no exit within %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), commandTimeout, out.String(), errb.String())
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("cotal %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// downs remembers which (test, home, space) already has a `down` in its
// cleanup, so repeated ups register it once.
var downs sync.Map

// downOnCleanup arranges a `cotal down` with the same --space and
// --store-dir as the up whose arguments (after "up") are upArgs, and
// --with-agents when they hold it.
func downOnCleanup(t testing.TB, home string, upArgs []string) {
	down := []string{"down"}
	for i := 0; i < len(upArgs); i++ {
		a := upArgs[i]
		switch {
		case (a == "--space" || a == "--store-dir") && i+1 < len(upArgs):
			down = append(down, a, upArgs[i+1])
			i++
		case strings.HasPrefix(a, "--space=") || strings.HasPrefix(a, "--store-dir=") || a == "--with-agents":
			down = append(down, a)
		}
	}
	key := fmt.Sprintf("%p\x00%s\x00%s", t, home, strings.Join(down, "\x00"))
	if _, loaded := downs.LoadOrStore(key, true); loaded {
		return
	}
	t.Cleanup(func() {
		defer downs.Delete(key)
		stdout, stderr, code := runCotal(t, home, down...)
		if code != 0 {
			t.Errorf("cleanup: cotal %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(down, " "), code, stdout, stderr)
		}
	})
}

// waitFor polls fn every 10 ms until it returns nil, failing t with fn's
// last error once total has passed.
func waitFor(t testing.TB, total time.Duration, fn func() error) {
	t.Helper()
	testutil.WaitFor(t, total, fn)
}
