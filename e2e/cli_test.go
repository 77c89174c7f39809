package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testmesh"
)

// upLine is the line `cotal up --detach` prints once the mesh is ready.
var upLine = regexp.MustCompile(`(?m)^mesh (\S+) up on (nats://\S+) \(pid (\d+), `)

// upDetached runs `cotal up --detach` with extra args, requires exit 0 and
// returns the url and pid it printed.
func upDetached(t *testing.T, home string, extra ...string) (url string, pid int) {
	t.Helper()
	stdout, stderr, code := runCotal(t, home, append([]string{"up", "--detach"}, extra...)...)
	if code != 0 {
		t.Fatalf("up --detach %v: exit %d\nstdout: %s\nstderr: %s", extra, code, stdout, stderr)
	}
	m := upLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("up --detach %v printed no `mesh <space> up on <url> (pid N, ...` line:\n%s", extra, stdout)
	}
	pid, _ = strconv.Atoi(m[3])
	return m[2], pid
}

// status is the part of `cotal status --json` these tests read.
type status struct {
	Space     string `json:"space"`
	Up        bool   `json:"up"`
	Reachable bool   `json:"reachable"`
	URL       string `json:"url"`
	PID       int    `json:"pid"`
	Mode      string `json:"mode"`
	Sync      string `json:"sync"`
	JetStream bool   `json:"jetstream"`
	Error     string `json:"error"`
}

func statusJSON(t *testing.T, home string, extra ...string) (status, int) {
	t.Helper()
	stdout, stderr, code := runCotal(t, home, append([]string{"status", "--json"}, extra...)...)
	var s status
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("status --json %v: %v\nstdout: %s\nstderr: %s", extra, err, stdout, stderr)
	}
	return s, code
}

// brokerRecord is the part of a store's broker.json these tests read.
type brokerRecord struct {
	PID int    `json:"pid"`
	URL string `json:"url"`
}

func readBrokerJSON(t *testing.T, storeDir string) brokerRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(storeDir, "broker.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r brokerRecord
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("broker.json: %v\n%s", err, b)
	}
	return r
}

// waitGone polls until pid no longer runs (a zombie counts as gone).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	waitFor(t, 10*time.Second, func() error {
		if broker.PIDAlive(pid) {
			return fmt.Errorf("pid %d still alive", pid)
		}
		return nil
	})
}

func TestUpStatusMintDown(t *testing.T) {
	t.Parallel()
	home := t.TempDir()

	url, pid := upDetached(t, home)
	if !strings.HasPrefix(url, "nats://127.0.0.1:") {
		t.Errorf("url %q is not on loopback", url)
	}

	stdout, stderr, code := runCotal(t, home, "up", "--detach")
	want := fmt.Sprintf("mesh default already running (pid %d, url %s)\n", pid, url)
	if code != 0 || stdout != want {
		t.Errorf("second up --detach: exit %d, stdout %q, stderr %q; want exit 0, stdout %q", code, stdout, stderr, want)
	}

	st, code := statusJSON(t, home)
	if code != 0 || !st.Up || !st.Reachable || st.Mode != "auth" || st.Sync != "always" || !st.JetStream || st.URL != url || st.PID != pid {
		t.Errorf("status --json: exit %d, %+v; want exit 0, up and reachable at %s (pid %d), mode auth, sync always, jetstream on", code, st, url, pid)
	}

	stdout, stderr, code = runCotal(t, home, "mint", "alice", "--subscribe", "team.backend", "--allow-publish", "team.backend", "--role", "reviewer", "--json")
	if code != 0 {
		t.Fatalf("mint: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var minted struct {
		Principal    string `json:"principal"`
		LifecycleUID string `json:"lifecycleUid"`
		Creds        string `json:"creds"`
		Role         string `json:"role"`
	}
	if err := json.Unmarshal([]byte(stdout), &minted); err != nil {
		t.Fatalf("mint --json: %v\n%s", err, stdout)
	}
	if minted.Principal != "local.alice" || len(minted.LifecycleUID) != 26 || minted.Role != "reviewer" {
		t.Errorf("mint --json: principal %q, lifecycle uid %q, role %q; want local.alice, 26 characters, reviewer", minted.Principal, minted.LifecycleUID, minted.Role)
	}
	fi, err := os.Stat(minted.Creds)
	if err != nil {
		t.Fatalf("creds file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("creds file %s has mode %v, want 0600", minted.Creds, fi.Mode().Perm())
	}

	// The minted creds work against the detached mesh: alice posts to a
	// channel she may publish on and JetStream acknowledges it.
	nc, err := nats.Connect(url,
		nats.UserCredentials(minted.Creds),
		nats.CustomInboxPrefix("_INBOX_local-alice-"+minted.LifecycleUID),
		nats.Timeout(5*time.Second), nats.MaxReconnects(0))
	if err != nil {
		t.Fatalf("connecting as alice: %v", err)
	}
	defer nc.Close()
	seqs, err := testmesh.Publish(nc, 10*time.Second, &nats.Msg{Subject: "cotal.default.chat.local.alice.team.backend", Data: []byte("hello from alice")})
	if err != nil {
		t.Fatalf("publishing as alice: %v", err)
	}
	if seqs[0] == 0 {
		t.Errorf("stored at seq 0: want a sequence")
	}
	nc.Close()

	stdout, stderr, code = runCotal(t, home, "down")
	if code != 0 {
		t.Fatalf("down: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	waitGone(t, pid)
	if st, code := statusJSON(t, home); code != 1 || st.Up {
		t.Errorf("status after down: exit %d, %+v; want exit 1, not up", code, st)
	}
}

func TestBadInputExitsTwo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string // what the message must name
	}{
		{name: "unknown flag", args: []string{"up", "--bogus"}, want: "--bogus"},
		{name: "bad space", args: []string{"status", "--space", "a.b"}, want: `"a.b"`},
		{name: "bad space json", args: []string{"status", "--json", "--space", "a.b"}, want: `"a.b"`},
		{name: "extra argument", args: []string{"down", "now"}, want: `"now"`},
		{name: "bad sync", args: []string{"up", "--sync", "sometimes"}, want: `"sometimes"`},
		{name: "bad ACL entry", args: []string{"mint", "bob", "--allow-publish", "foo/bar"}, want: "foo/bar"},
		{name: "bad name", args: []string{"mint", "bo-b"}, want: `"bo-b"`},
		{name: "bad profile", args: []string{"mint", "x", "--profile", "admin"}, want: `"admin"`},
		{name: "bad default space", args: []string{"use", "a.b"}, want: `"a.b"`},
		{name: "url not nats", args: []string{"up", "--url", "http://a:4222"}, want: `"http"`},
		{name: "url with password", args: []string{"up", "--url", "nats://u:secret@a:4222"}, want: "--creds"},
		{name: "url with sync interval", args: []string{"up", "--url", "nats://a:4222", "--sync", "interval"}, want: "--sync interval"},
		{name: "open beyond loopback", args: []string{"up", "--open", "--host", "0.0.0.0"}, want: "--open with --host 0.0.0.0 refused"},
		{name: "host with a port", args: []string{"up", "--host", "10.1.2.3:4222"}, want: "carries a port"},
		{name: "host with url", args: []string{"up", "--host", "0.0.0.0", "--url", "nats://a:4222"}, want: "--host is where the embedded broker listens"},
		{name: "half a TLS pair", args: []string{"up", "--host", "0.0.0.0", "--tls-key", "k.pem"}, want: "--tls-cert and --tls-key go together"},
		{name: "host on the dashboard", args: []string{"--host", "0.0.0.0"}, want: "cotal up --host ADDR --detach"},
		{name: "malformed pin", args: []string{"status", "--tls-pin", "abc"}, want: "not a SHA-256 fingerprint"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := runCotal(t, t.TempDir(), tc.args...)
			for _, out := range []string{stdout, stderr} {
				if strings.Contains(out, "goroutine") || strings.Contains(out, "panic") {
					t.Fatalf("cotal %s crashed:\nstdout: %s\nstderr: %s", strings.Join(tc.args, " "), stdout, stderr)
				}
			}
			if strings.Contains(stdout+stderr, "secret") {
				t.Fatalf("cotal %s repeated the password it refused: %s", strings.Join(tc.args, " "), stderr)
			}
			msg := strings.TrimSuffix(stderr, "\n")
			if code != 2 || !strings.HasPrefix(msg, "cotal: ") || strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) {
				t.Errorf("cotal %s: exit %d, stderr %q; want exit 2 and one line `cotal: ...` naming %s", strings.Join(tc.args, " "), code, stderr, tc.want)
			}
		})
	}
}

func TestOpenMode(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	url, pid := upDetached(t, home, "--open", "--space", "opn")

	nc, err := nats.Connect(url, nats.Timeout(5*time.Second), nats.MaxReconnects(0))
	if err != nil {
		t.Fatalf("unauthenticated connect to an open mesh: %v", err)
	}
	defer nc.Close()
	if _, err := testmesh.Publish(nc, 10*time.Second, &nats.Msg{Subject: "cotal.opn.chat.local.bob.general", Data: []byte("hi")}); err != nil {
		t.Fatalf("unauthenticated publish on an open mesh: %v", err)
	}
	nc.Close()

	stdout, stderr, code := runCotal(t, home, "mint", "carol", "--space", "opn")
	if code != 2 || !strings.Contains(stderr, "open mode") {
		t.Errorf("mint on an open mesh: exit %d, stdout %q, stderr %q; want exit 2 saying it runs in open mode", code, stdout, stderr)
	}

	if stdout, stderr, code := runCotal(t, home, "down", "--space", "opn"); code != 0 {
		t.Fatalf("down: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	waitGone(t, pid)
}

func TestAuthRefusesAnonymous(t *testing.T) {
	t.Parallel()
	url, _ := upDetached(t, t.TempDir())
	nc, err := nats.Connect(url, nats.Timeout(5*time.Second), nats.MaxReconnects(0))
	if err == nil {
		nc.Close()
		t.Fatal("a client without creds connected to an auth-mode mesh")
	}
	if !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("connect without creds: %v; want an authorization violation", err)
	}
}

func TestMeshesListsStoppedSpaces(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home, "--space", "alpha")
	upDetached(t, home, "--space", "beta")
	if stdout, stderr, code := runCotal(t, home, "down", "--space", "beta"); code != 0 {
		t.Fatalf("down --space beta: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}

	type row struct {
		Space   string `json:"space"`
		State   string `json:"state"`
		Default bool   `json:"default"`
	}
	meshes := func() map[string]row {
		t.Helper()
		stdout, stderr, code := runCotal(t, home, "meshes", "--json")
		if code != 0 {
			t.Fatalf("meshes --json: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		var rows []row
		if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
			t.Fatalf("meshes --json: %v\n%s", err, stdout)
		}
		m := map[string]row{}
		for _, r := range rows {
			m[r.Space] = r
		}
		return m
	}

	got := meshes()
	want := map[string]row{"alpha": {"alpha", "running", false}, "beta": {"beta", "stopped", false}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("meshes --json: %v, want %v", got, want)
	}

	if stdout, stderr, code := runCotal(t, home, "use", "beta"); code != 0 {
		t.Fatalf("use beta: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	got = meshes()
	want = map[string]row{"alpha": {"alpha", "running", false}, "beta": {"beta", "stopped", true}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("meshes --json after `use beta`: %v, want %v", got, want)
	}
}

func TestDeadLockRecovered(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	upDetached(t, home)
	rec := readBrokerJSON(t, filepath.Join(home, "spaces", "default"))
	if err := syscall.Kill(rec.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("killing the mesh (pid %d): %v", rec.PID, err)
	}
	// Nothing may reap the orphaned child, so it can stay a zombie;
	// broker.PIDAlive, like cotal itself, treats that as gone.
	waitGone(t, rec.PID)

	_, pid := upDetached(t, home)
	if pid == rec.PID {
		t.Errorf("up after a crash reports the dead pid %d", pid)
	}
	if st, code := statusJSON(t, home); code != 0 || !st.Up || !st.Reachable || st.PID != pid {
		t.Errorf("status after recovery: exit %d, %+v; want exit 0, up and reachable as pid %d", code, st, pid)
	}
}

func TestUnwritableStoreDir(t *testing.T) {
	t.Parallel()
	// Tests run as root, where permissions do not stop a write: a path
	// under a regular file cannot be created by anyone.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(file, "x")
	for _, args := range [][]string{
		{"up", "--store-dir", store},
		{"up", "--detach", "--store-dir", store},
	} {
		stdout, stderr, code := runCotal(t, t.TempDir(), args...)
		if code != 1 || !strings.Contains(stderr, store) {
			t.Errorf("cotal %s: exit %d, stdout %q, stderr %q; want exit 1 naming %s", strings.Join(args, " "), code, stdout, stderr, store)
		}
	}
}
