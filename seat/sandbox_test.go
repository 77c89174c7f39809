package seat_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/sandbox"
)

// launchDir is where a spawned seat's creds and launch material live.
func (h *harness) launchDir(acc client.SpawnAccepted) string {
	return seat.LaunchDir(issue.RunDir(h.paths), acc.Name, acc.UID)
}

// firstFile is some regular file under dir, for a seat to try to read.
func firstFile(t *testing.T, dir string) string {
	t.Helper()
	var found string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && found == "" && d.Type().IsRegular() {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no file under %s", dir)
	}
	return found
}

// noNamespace reports whether a seat's sandbox says the system gave it no
// mount namespace (a kernel without unprivileged user namespaces, not Linux).
func noNamespace(s string) bool {
	return strings.Contains(s, "no mount namespace") || strings.Contains(s, "needs Linux")
}

// prober writes a persona whose seat tries to read each of the space's
// secrets, directly and through its parent's (the manager's) /proc entry,
// and its own creds and launch material, into out; then it idles.
func (h *harness) prober(t *testing.T, name, out string, secrets map[string]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`try() { if cat "$2" >/dev/null 2>&1; then echo "LEAK $1"; else echo "DENY $1"; fi; }` + "\n")
	b.WriteString("{\n")
	for what, path := range secrets {
		fmt.Fprintf(&b, "try %s '%s'\n", what, path)
		fmt.Fprintf(&b, "try proc-%s \"/proc/$PPID/root\"'%s'\n", what, path)
	}
	b.WriteString("try environ /proc/$PPID/environ\n")
	b.WriteString(`grep -q 'NATS USER JWT' "$COTAL_CREDS" && echo OWN creds` + "\n")
	b.WriteString(`grep -q "$COTAL_CREDS" "$COTAL_LAUNCH_MATERIAL" && echo OWN material` + "\n")
	b.WriteString("echo END\n} > " + out + " 2>&1\necho probed\nexec sleep 60\n")
	h.persona(name, "sh", []string{"-c", b.String()}, nil)
}

// secrets are the store's files no seat may read, and another seat's creds.
func (h *harness) secrets(t *testing.T, other client.SpawnAccepted) map[string]string {
	t.Helper()
	return map[string]string{
		"keys":       broker.KeysFile(h.paths),
		"operator":   h.paths.OperatorCreds(),
		"minted":     firstFile(t, issue.MintedDir(h.paths)),
		"stored":     firstFile(t, h.paths.JetStreamDir()),
		"other-seat": filepath.Join(h.launchDir(other), "seat.creds"),
	}
}

// probe spawns the prober and returns what it saw and its ps row.
func (h *harness) probe(t *testing.T, persona, out string) (string, client.Row, client.SpawnAccepted) {
	t.Helper()
	acc := h.ready(persona)
	waitScreen(t, h.c, h.iid, acc.Name, "probed", 10*time.Second)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := row(ps(t, h.c, h.iid), acc.Name)
	t.Logf("%s (%s) saw:\n%s", acc.Name, r.Sandbox, b)
	return string(b), r, acc
}

func assertSealed(t *testing.T, r client.Row, saw string) {
	t.Helper()
	if strings.Contains(saw, "LEAK") || !strings.Contains(saw, "DENY keys") || !strings.Contains(saw, "DENY proc-keys") {
		t.Errorf("seat %s (%s) reached what it must not:\n%s", r.Name, r.Sandbox, saw)
	}
	if !strings.Contains(saw, "OWN creds") || !strings.Contains(saw, "OWN material") || !strings.Contains(saw, "END") {
		t.Errorf("seat %s cannot read its own creds and launch material:\n%s", r.Name, saw)
	}
}

func TestSeatCannotReadTheSpacesKeysOrOthersCreds(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("shell", "sh", nil, nil)
	other := h.ready("shell")
	out := filepath.Join(t.TempDir(), "probe.txt")
	h.prober(t, "prober", out, h.secrets(t, other))

	saw, r, acc := h.probe(t, "prober", out)
	if r.Sandbox != sandbox.Namespace {
		if noNamespace(r.Sandbox) {
			t.Skipf("this system refuses seats a mount namespace: %s", r.Sandbox)
		}
		t.Fatalf("ps says the seat is %q, want %s", r.Sandbox, sandbox.Namespace)
	}
	assertSealed(t, r, saw)

	// The launch directory: 0700, its files 0600, the creds the seat was
	// told of; gone once the seat has exited.
	dir := h.launchDir(acc)
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "seat.creds"): 0o600, filepath.Join(dir, "launch.json"): 0o600} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s is %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	m, err := sandbox.ReadMaterial(filepath.Join(dir, "launch.json"))
	if err != nil || m.Creds != filepath.Join(dir, "seat.creds") || m.Name != acc.Name || m.LifecycleUID != acc.UID {
		t.Errorf("launch material %+v (%v)", m, err)
	}
	mustCall(t, h.c, h.iid, "despawn", map[string]any{"name": acc.Name, "graceful": false}, nil)
	waitFor(t, 5*time.Second, func() error {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			return fmt.Errorf("launch directory %s still there (%v)", dir, err)
		}
		return nil
	})
	if _, err := os.Stat(h.launchDir(other)); err != nil {
		t.Errorf("stopping one seat took another's launch directory: %v", err)
	}
}

// The seat's environment is the allow-list, its persona's env and its own
// knobs: nothing else the manager's process happens to hold.
func TestSeatEnvironmentIsTheAllowList(t *testing.T) {
	for k, v := range map[string]string{
		"COTAL_HOME": t.TempDir(), "XDG_DATA_HOME": t.TempDir(), "COTAL_DETACHED_CHILD": "1",
		"MY_SERVICE_TOKEN": "secret", "AWS_SECRET_ACCESS_KEY": "secret", "ANTHROPIC_API_KEY": "sk-test", "LC_TIME": "C",
	} {
		t.Setenv(k, v)
	}
	h := startMesh(t, 5*time.Second)
	out := filepath.Join(t.TempDir(), "env.txt")
	h.persona("envdump", "sh", []string{"-c", "env > " + out + "; echo dumped; exec sleep 60"}, map[string]string{"PERSONA_VAR": "p"})
	acc := h.ready("envdump")
	waitScreen(t, h.c, h.iid, acc.Name, "dumped", 10*time.Second)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	allowed := map[string]bool{
		// the OS allow-list
		"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true, "LANG": true, "LANGUAGE": true, "TZ": true,
		"TMPDIR": true, "COLORTERM": true, "XDG_CONFIG_HOME": true, "XDG_CACHE_HOME": true, "XDG_STATE_HOME": true,
		"XDG_RUNTIME_DIR": true, "HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "ALL_PROXY": true,
		"http_proxy": true, "https_proxy": true, "no_proxy": true, "all_proxy": true,
		"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "NODE_EXTRA_CA_CERTS": true, "REQUESTS_CA_BUNDLE": true, "CURL_CA_BUNDLE": true,
		// the pty's, the persona's, and what sh sets itself
		"TERM": true, "PERSONA_VAR": true, "PWD": true, "OLDPWD": true, "SHLVL": true, "_": true,
	}
	for k := range env {
		if !allowed[k] && !strings.HasPrefix(k, "LC_") && !strings.HasPrefix(k, "COTAL_") {
			t.Errorf("the seat inherited %s, which is on no list", k)
		}
	}
	for _, k := range []string{"COTAL_HOME", "XDG_DATA_HOME", "COTAL_DETACHED_CHILD", "MY_SERVICE_TOKEN", "AWS_SECRET_ACCESS_KEY", "ANTHROPIC_API_KEY"} {
		if v, ok := env[k]; ok {
			t.Errorf("the seat (a command, not claude) got %s=%s", k, v)
		}
	}
	dir := h.launchDir(acc)
	for k, want := range map[string]string{
		"PERSONA_VAR": "p", "LC_TIME": "C", "TERM": "xterm-256color", "COTAL_NAME": acc.Name, "COTAL_LIFECYCLE_UID": acc.UID,
		"COTAL_SPACE": space, "COTAL_MANAGER_INSTANCE": h.iid, "COTAL_URL": h.m.Broker().URL(),
		"COTAL_CREDS": filepath.Join(dir, "seat.creds"), "COTAL_LAUNCH_MATERIAL": filepath.Join(dir, "launch.json"),
		// The cotal that runs this manager comes first, so `cotal` inside
		// the seat is it.
		"PATH": filepath.Dir(h.m.Manager().Launcher()) + string(os.PathListSeparator) + os.Getenv("PATH"),
	} {
		if env[k] != want {
			t.Errorf("the seat has %s=%q, want %q", k, env[k], want)
		}
	}
}

// coldStore is a store directory on no path agents write to directly, so
// Landlock path rules may hide it.
func coldStore(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "cotal-seat-test-")
	if err != nil {
		t.Skipf("no cold directory for a store: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return filepath.Join(d, "store")
}

func TestSeatSandboxFallsBackToLandlockPathRules(t *testing.T) {
	h := startMeshWith(t, host.Config{Paths: config.Paths{Space: space, StoreDir: coldStore(t)}, Readiness: 5 * time.Second,
		SandboxSkip: []string{sandbox.Namespace}})
	h.persona("shell", "sh", nil, nil)
	other := h.ready("shell")
	out := filepath.Join(t.TempDir(), "probe.txt")
	h.prober(t, "prober", out, h.secrets(t, other))
	saw, r, _ := h.probe(t, "prober", out)
	if r.Sandbox != sandbox.Landlock {
		if sandbox.ABI() < 2 {
			t.Skipf("this kernel has Landlock ABI %d: %s", sandbox.ABI(), r.Sandbox)
		}
		t.Fatalf("ps says %q, want %s", r.Sandbox, sandbox.Landlock)
	}
	assertSealed(t, r, saw)
}

// A seat that cannot be sandboxed still runs, and ps says why; its
// probe then reads the keys, which shows the probe would see a leak.
func TestUnsandboxedSeatIsReported(t *testing.T) {
	h := startMeshWith(t, host.Config{Paths: config.Paths{Space: space, StoreDir: t.TempDir()}, Readiness: 5 * time.Second,
		SandboxSkip: []string{sandbox.Namespace, sandbox.Landlock}})
	h.persona("shell", "sh", nil, nil)
	other := h.ready("shell")
	out := filepath.Join(t.TempDir(), "probe.txt")
	h.prober(t, "prober", out, h.secrets(t, other))
	saw, r, _ := h.probe(t, "prober", out)
	if !strings.HasPrefix(r.Sandbox, "unsandboxed: ") || !strings.Contains(r.Sandbox, "skipped") {
		t.Fatalf("ps says %q, want unsandboxed with the reason", r.Sandbox)
	}
	if !strings.Contains(saw, "LEAK keys") {
		t.Errorf("an unsandboxed seat should read the keys; the probe is blind:\n%s", saw)
	}

	// cotal ps shows it, reason and all.
	cmd := exec.Command(cotalBin, "--space", space, "--store-dir", h.paths.StoreDir, "ps")
	cmd.Env = append(os.Environ(), "COTAL_HOME="+t.TempDir())
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cotal ps: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "SANDBOX") || !strings.Contains(string(b), r.Name+" is unsandboxed: ") {
		t.Errorf("cotal ps does not say the seat is unsandboxed:\n%s", b)
	}
	b, err = exec.Command(cotalBin, "--space", space, "--store-dir", h.paths.StoreDir, "ps", "--json").Output()
	var cs struct{ Rows []client.Row }
	if err != nil || json.Unmarshal(b, &cs) != nil {
		t.Fatalf("cotal ps --json: %v\n%s", err, b)
	}
	for _, x := range cs.Rows {
		if x.Sandbox == "" {
			t.Errorf("ps --json row %s has no sandbox", x.Name)
		}
	}
}

// A sandboxed seat still stops within the 3 s rule: SIGTERM, then SIGKILL.
func TestSandboxedSeatStopsWithinTheBound(t *testing.T) {
	h := startMesh(t, 5*time.Second)
	h.persona("polite", "sh", []string{"-c", "echo up; exec sleep 60"}, nil)
	h.persona("stubborn", "sh", []string{"-c", `trap "" TERM HUP; echo up; while :; do sleep 1; done`}, nil)
	for _, c := range []struct {
		persona     string
		min, max    time.Duration
		wantProcess string
	}{
		{"polite", 0, 2 * time.Second, "killed SIGTERM"},
		{"stubborn", 2500 * time.Millisecond, 6 * time.Second, "killed SIGKILL"},
	} {
		acc := h.ready(c.persona)
		if r, _ := row(ps(t, h.c, h.iid), acc.Name); r.Sandbox != sandbox.Namespace && !noNamespace(r.Sandbox) {
			t.Fatalf("%s is %q", acc.Name, r.Sandbox)
		}
		start := time.Now()
		var r client.Row
		mustCall(t, h.c, h.iid, "despawn", map[string]any{"name": acc.Name, "graceful": true}, &r)
		took := time.Since(start)
		if took < c.min || took > c.max || r.Process != c.wantProcess {
			t.Errorf("%s stopped in %s as %q, want %s..%s as %q", acc.Name, took, r.Process, c.min, c.max, c.wantProcess)
		}
	}
}

// A seat whose harness runs a sandbox of its own (bwrap), where the seat's
// sandbox cannot let it nest (Landlock path rules forbid its mounts): ps
// says so, in its row and in words, and a command seat says nothing.
func TestNestedSandboxThatCannotRunIsReported(t *testing.T) {
	h := startMeshWith(t, host.Config{Paths: config.Paths{Space: space, StoreDir: coldStore(t)}, Readiness: 20 * time.Second,
		SandboxSkip: []string{sandbox.Namespace}})
	h.fakeClaudePersona(t, "cc", false)
	h.persona("shell", "sh", nil, nil)
	acc := mustSpawn(t, h.c, h.iid, client.SpawnArgs{Persona: "cc"})
	if res := goal(t, h.c, h.iid, acc.GoalID, 25*time.Second); res.State != ep.GoalSucceeded {
		t.Fatalf("spawn of the stand-in: %s %+v", res.State, res.Error)
	}
	shell := h.ready("shell")
	rows := ps(t, h.c, h.iid)
	r, _ := row(rows, acc.Name)
	if r.Sandbox != sandbox.Landlock {
		if sandbox.ABI() < 2 {
			t.Skipf("this kernel has Landlock ABI %d: %s", sandbox.ABI(), r.Sandbox)
		}
		t.Fatalf("ps says %q, want %s", r.Sandbox, sandbox.Landlock)
	}
	const want = "claude's own sandbox (bwrap) cannot run in this seat: Landlock path rules forbid the mounts it makes"
	if r.Nested != want {
		t.Errorf("ps row nested %q, want %q", r.Nested, want)
	}
	if s, _ := row(rows, shell.Name); s.Nested != "" {
		t.Errorf("a command seat's row says %q", s.Nested)
	}
	cmd := exec.Command(cotalBin, "--space", space, "--store-dir", h.paths.StoreDir, "ps")
	cmd.Env = append(os.Environ(), "COTAL_HOME="+t.TempDir())
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cotal ps: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), acc.Name+": "+want) {
		t.Errorf("cotal ps does not say the harness's sandbox cannot run:\n%s", b)
	}
}
