//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cotal-go/cotal/seat/pty"
	"github.com/cotal-go/cotal/seat/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main()
	if os.Getenv(envBystander) != "" {
		becomeCaplessSleeper()
	}
	if mode := os.Getenv(envNested); mode != "" {
		nestedMain(mode)
	}
	os.Exit(m.Run())
}

// envBystander makes this test binary a process of the same user with no
// capabilities at all, which then sleeps.
const envBystander = "COTAL_SANDBOX_TEST_BYSTANDER"

// becomeCaplessSleeper drops every capability, bounding set included, and
// execs sleep. As root, ptrace's capability rule then no longer stands
// between a capless seat and this process: only the Landlock domain does.
func becomeCaplessSleeper() {
	runtime.LockOSThread()
	for c := 0; c < 64; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); errors.Is(err, unix.EINVAL) {
			break
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	_ = unix.Capset(&hdr, &data[0])
	sleep, err := exec.LookPath("sleep")
	if err == nil {
		err = syscall.Exec(sleep, []string{"sleep", "60"}, os.Environ())
	}
	fmt.Fprintln(os.Stderr, "bystander:", err)
	os.Exit(3)
}

// store is a space's store as the launcher sees it: keys, the operator's
// creds, stored messages, and two seats' launch directories.
type store struct {
	root, auth, jetstream, seats string
	own, other                   string // launch directories
}

func newStore(t *testing.T, root string) *store {
	t.Helper()
	s := &store{root: root, auth: filepath.Join(root, "auth"), jetstream: filepath.Join(root, "jetstream"), seats: filepath.Join(root, "run", "seats")}
	s.own, s.other = filepath.Join(s.seats, "alice-1"), filepath.Join(s.seats, "bob-2")
	for f, body := range map[string]string{
		filepath.Join(s.auth, "keys.json"):          "SIGNING-KEY",
		filepath.Join(s.auth, "operator.creds"):     "OPERATOR-CREDS",
		filepath.Join(s.auth, "minted", "x.json"):   "MINTED",
		filepath.Join(s.jetstream, "DM", "msgs"):    "STORED-DM",
		filepath.Join(s.own, "seat.creds"):          "OWN-CREDS",
		filepath.Join(s.other, "seat.creds"):        "OTHER-CREDS",
		filepath.Join(root, "broker.json"):          "{}",
		filepath.Join(root, "run", "unrelated.txt"): "x",
	} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *store) material(t *testing.T, skip ...string) string {
	t.Helper()
	path := filepath.Join(s.own, fmt.Sprintf("launch-%d.json", time.Now().UnixNano()))
	m := sandbox.Material{Creds: filepath.Join(s.own, "seat.creds"), Dir: s.own, Protect: []string{s.auth, s.jetstream, s.seats}, Skip: skip}
	if err := sandbox.WriteMaterial(path, m); err != nil {
		t.Fatal(err)
	}
	return path
}

// coldDir is a directory on no path an agent writes to directly (not under
// $HOME, /tmp or the working directory), for Landlock path rules.
func coldDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "cotal-sandbox-test-")
	if err != nil {
		t.Skipf("no cold directory for a store: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// probeScript tries to read each secret, directly and through other
// processes' /proc entries, and its own creds; one line per attempt.
func probeScript(s *store, other int) string {
	var b strings.Builder
	b.WriteString(`try() { if cat "$2" >/dev/null 2>&1; then echo "LEAK $1"; else echo "DENY $1"; fi; }` + "\n")
	for name, path := range map[string]string{
		"keys":            filepath.Join(s.auth, "keys.json"),
		"operator":        filepath.Join(s.auth, "operator.creds"),
		"minted":          filepath.Join(s.auth, "minted", "x.json"),
		"stored":          filepath.Join(s.jetstream, "DM", "msgs"),
		"other-seat":      filepath.Join(s.other, "seat.creds"),
		"proc-parent":     "/proc/$PPID/root" + filepath.Join(s.auth, "keys.json"),
		"proc-parent-cwd": "/proc/$PPID/cwd/../../../../../../../../../.." + filepath.Join(s.auth, "keys.json"),
		"proc-other":      fmt.Sprintf("/proc/%d/root%s", other, filepath.Join(s.auth, "keys.json")),
		"environ":         "/proc/$PPID/environ",
	} {
		fmt.Fprintf(&b, "try %s %s\n", name, path)
	}
	fmt.Fprintf(&b, "if [ \"$(cat %s)\" = OWN-CREDS ]; then echo OWN ok; else echo OWN missing; fi\n", filepath.Join(s.own, "seat.creds"))
	b.WriteString("if [ -e /proc/self/fd/3 ]; then echo 'LEAK report-pipe'; else echo 'DENY report-pipe'; fi\n")
	b.WriteString("echo $$ > scratch && [ \"$(cat scratch)\" = $$ ] && echo WRITE ok\n")
	fmt.Fprintf(&b, "echo LIST-AUTH $(ls -A %s 2>&1 | tr '\\n' ' ')\n", s.auth)
	b.WriteString("echo END\n")
	return b.String()
}

// launch runs sh -c script as a seat through the launcher, in a real pty,
// with the working directory cwd; it returns the report and the lines the
// script wrote to its output file.
func launch(t *testing.T, s *store, cwd string, skip []string, script string) (sandbox.Report, []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(cwd, "out.txt")
	env := append(os.Environ(), sandbox.MaterialEnv+"="+s.material(t, skip...))
	var seat *pty.Seat
	rep, err := sandbox.Start(sandbox.Plan{Launcher: exe, Path: "/bin/sh", Argv0: "sh", Args: []string{"-c", "{\n" + script + "\n} > " + out + " 2>&1"}}, 10*time.Second,
		func(path string, args []string, attr *syscall.SysProcAttr, report *os.File) error {
			var err error
			seat, err = pty.Start(context.Background(), pty.Config{Path: path, Args: args, Dir: cwd, Env: env, SysProcAttr: attr, ExtraFiles: []*os.File{report}})
			return err
		})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(seat.Close)
	select {
	case <-seat.Done():
	case <-time.After(20 * time.Second):
		t.Fatalf("the seat did not finish; screen:\n%s", seat.Screen())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the seat wrote no output (%v); report %+v; screen:\n%s", err, rep, seat.Screen())
	}
	return rep, strings.Split(strings.TrimSpace(string(b)), "\n")
}

// bystander is an unsandboxed process of the same user, whose /proc entry
// a seat might use to look around its covers. It holds no capability, so
// the seat's own lack of them does not keep it out.
func bystander(t *testing.T) int {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envBystander+"=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

func assertConfined(t *testing.T, rep sandbox.Report, lines []string) {
	t.Helper()
	text := strings.Join(lines, "\n")
	t.Logf("report %s; the seat saw:\n%s", rep, text)
	if strings.Contains(text, "LEAK") || !strings.Contains(text, "DENY keys") {
		t.Errorf("the seat read what it must not (report %s):\n%s", rep, text)
	}
	if !strings.Contains(text, "OWN ok") {
		t.Errorf("the seat cannot read its own creds:\n%s", text)
	}
	if !strings.Contains(text, "WRITE ok") {
		t.Errorf("the seat cannot write in its working directory:\n%s", text)
	}
	if !strings.Contains(text, "END") {
		t.Errorf("the script did not finish:\n%s", text)
	}
}

func TestNamespaceHidesTheStore(t *testing.T) {
	s := newStore(t, t.TempDir())
	rep, lines := launch(t, s, t.TempDir(), nil, probeScript(s, bystander(t)))
	if rep.Mode != sandbox.Namespace {
		if strings.Contains(rep.Reason, "no mount namespace") {
			t.Skipf("this kernel refuses the seat a mount namespace: %s", rep)
		}
		t.Fatalf("report %s, want %s", rep, sandbox.Namespace)
	}
	assertConfined(t, rep, lines)
	if l := lines[len(lines)-2]; strings.TrimSpace(l) != "LIST-AUTH" {
		t.Errorf("the covered auth dir shows entries: %q", l)
	}
}

func TestLandlockPathsWithoutNamespace(t *testing.T) {
	s := newStore(t, coldDir(t))
	rep, lines := launch(t, s, t.TempDir(), []string{sandbox.Namespace}, probeScript(s, bystander(t)))
	if rep.Mode != sandbox.Landlock {
		if sandbox.ABI() < 2 {
			t.Skipf("this kernel has Landlock ABI %d: %s", sandbox.ABI(), rep)
		}
		t.Fatalf("report %s, want %s", rep, sandbox.Landlock)
	}
	if !strings.Contains(rep.Reason, "skipped") {
		t.Errorf("the report does not say why there is no namespace: %+v", rep)
	}
	assertConfined(t, rep, lines)
}

// A store under /tmp (hot: agents create files directly there) cannot be
// hidden by path rules without breaking the seat, so it runs unsandboxed,
// and says so; the leak shows the probe would catch one.
func TestLandlockRefusedOnAHotPath(t *testing.T) {
	s := newStore(t, t.TempDir())
	rep, lines := launch(t, s, t.TempDir(), []string{sandbox.Namespace}, probeScript(s, bystander(t)))
	if rep.Mode != sandbox.None || !strings.Contains(rep.Reason, "would be unreadable") {
		t.Fatalf("report %+v, want none saying why path rules would not do", rep)
	}
	if text := strings.Join(lines, "\n"); !strings.Contains(text, "LEAK keys") {
		t.Errorf("an unsandboxed seat should read the keys here; the probe is blind:\n%s", text)
	}
}

func TestNoneIsReported(t *testing.T) {
	s := newStore(t, coldDir(t))
	rep, lines := launch(t, s, t.TempDir(), []string{sandbox.Namespace, sandbox.Landlock}, "cat "+filepath.Join(s.auth, "keys.json")+"; echo")
	if rep.Mode != sandbox.None || !strings.HasPrefix(rep.String(), "unsandboxed: ") || !strings.Contains(rep.Reason, "skipped") {
		t.Fatalf("report %+v (%s), want none with the reason", rep, rep)
	}
	if lines[0] != "SIGNING-KEY" {
		t.Errorf("got %q", lines)
	}
}

// A seat whose working directory lies inside a protected directory could
// read the real directory through it, covers or not.
func TestWorkingDirectoryInsideTheStoreIsUnsandboxed(t *testing.T) {
	s := newStore(t, t.TempDir())
	rep, _ := launch(t, s, s.jetstream, nil, "true")
	if rep.Mode != sandbox.None || !strings.Contains(rep.Reason, "working directory") {
		t.Fatalf("report %+v, want none naming the working directory", rep)
	}
}

func TestProbe(t *testing.T) {
	exe, _ := os.Executable()
	s := newStore(t, t.TempDir())
	rep := sandbox.Probe(exe, []string{s.auth, s.seats})
	if !rep.Sandboxed() && !strings.Contains(rep.Reason, "no mount namespace") {
		t.Fatalf("probe: %s", rep)
	}
	t.Logf("probe: %+v", rep)
	if _, err := os.Stat(filepath.Join(s.auth, "keys.json")); err != nil {
		t.Fatalf("the probe touched the real store: %v", err)
	}
}

// envUnprivileged marks the run of this test binary as an unprivileged
// user that TestAsAnUnprivilegedUser starts.
const envUnprivileged = "COTAL_SANDBOX_TEST_UNPRIVILEGED"

// TestAsAnUnprivilegedUser runs the confinement tests again as nobody, so
// the user-namespace path (no root: a user namespace carries the mount
// namespace) is exercised on a machine whose tests run as root.
func TestAsAnUnprivilegedUser(t *testing.T) {
	if os.Getenv(envUnprivileged) != "" {
		t.Skip("already unprivileged")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: the other tests already run unprivileged")
	}
	const nobody = 65534
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.v", "-test.count=1", "-test.run", "^(TestNamespaceHidesTheStore|TestLandlockPathsWithoutNamespace|TestNoneIsReported|TestProbe|TestNestedNamespacesKeepTheCovers)$")
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp, envUnprivileged + "=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid %d:\n%s", nobody, out)
	if err != nil {
		t.Fatalf("the tests failed as an unprivileged user: %v", err)
	}
	for _, name := range []string{"TestNamespaceHidesTheStore", "TestLandlockPathsWithoutNamespace", "TestNestedNamespacesKeepTheCovers"} {
		if !strings.Contains(string(out), "--- PASS: "+name) {
			t.Errorf("%s did not pass as an unprivileged user (skipped?)", name)
		}
	}
}
