package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/testcluster"
)

// clusterStatus is the cluster part of `cotal status --json`.
type clusterStatus struct {
	Up       bool            `json:"up"`
	Delivery string          `json:"delivery"`
	Cluster  *broker.Cluster `json:"cluster"`
}

// TestUpOnATrustedCluster is the person's path: `cotal broker config`
// into the servers' configuration, `cotal up --url` on the three of them,
// status naming the cluster, its meta leader and R3 streams, then down.
func TestUpOnATrustedCluster(t *testing.T) {
	home := t.TempDir()
	stdout, stderr, code := runCotal(t, home, "broker", "config", "--space", "team")
	if code != 0 || !strings.Contains(stdout, "resolver: MEMORY") {
		t.Fatalf("broker config: exit %d\n%s\n%s", code, stdout, stderr)
	}
	conf := filepath.Join(t.TempDir(), "trust.conf")
	if err := os.WriteFile(conf, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	c := testcluster.Start(t, 3, conf)

	url, _ := upDetached(t, home, "--space", "team", "--url", c.URL())
	if url != c.URL() {
		t.Errorf("up says it runs on %s, want the cluster %s", url, c.URL())
	}
	waitFor(t, 30*time.Second, func() error {
		stdout, _, _ = runCotal(t, home, "status", "--json", "--space", "team")
		var s clusterStatus
		if err := json.Unmarshal([]byte(stdout), &s); err != nil {
			return err
		}
		if s.Cluster == nil || s.Cluster.Name != c.Name() || s.Cluster.MetaLeader == "" || !strings.HasPrefix(s.Delivery, "serving") {
			return &statusErr{stdout}
		}
		for _, st := range s.Cluster.Streams {
			if st.Replicas != 3 {
				return &statusErr{stdout}
			}
		}
		return nil
	})
	stdout, _, _ = runCotal(t, home, "status", "--space", "team")
	for _, want := range []string{"cluster    " + c.Name(), "meta       leader ", "R3 leader"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("status does not say %q:\n%s", want, stdout)
		}
	}
	if _, stderr, code := runCotal(t, home, "down", "--space", "team"); code != 0 {
		t.Fatalf("down: exit %d: %s", code, stderr)
	}
}

// TestUpOpenOnACluster runs an open mesh on a cluster without auth, and up
// says what that means.
func TestUpOpenOnACluster(t *testing.T) {
	home := t.TempDir()
	c := testcluster.Start(t, 3, "")
	stdout, stderr, code := runCotal(t, home, "up", "--detach", "--open", "--space", "o", "--url", c.URL())
	if code != 0 || !strings.Contains(stdout, "OPEN on an external cluster") {
		t.Fatalf("up --open --url: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, stderr, code := runCotal(t, home, "down", "--space", "o"); code != 0 {
		t.Fatalf("down: exit %d: %s", code, stderr)
	}
}

type statusErr struct{ out string }

func (e *statusErr) Error() string { return "status is not there yet:\n" + e.out }

// storeOf is the store dir `cotal status --json` names for space in home.
func storeOf(t *testing.T, home, space string) string {
	t.Helper()
	stdout, _, _ := runCotal(t, home, "status", "--json", "--space", space)
	var s struct {
		StoreDir string `json:"storeDir"`
	}
	if err := json.Unmarshal([]byte(stdout), &s); err != nil || s.StoreDir == "" {
		t.Fatalf("status --json names no store: %v\n%s", err, stdout)
	}
	return s.StoreDir
}

// deliveryOf is what status, run in home, says of the delivery service
// and how many managers answered.
func deliveryOf(t *testing.T, home, space string) (string, int) {
	t.Helper()
	stdout, _, _ := runCotal(t, home, "status", "--json", "--space", space)
	var s struct {
		Delivery string `json:"delivery"`
		Managers int    `json:"managers"`
	}
	_ = json.Unmarshal([]byte(stdout), &s)
	return s.Delivery, s.Managers
}

// TestTwoMeshesShareACluster runs two mesh processes of one space on one
// trusted cluster, as two machines holding the space's keys would (two
// stores): both managers answer, one delivery service serves, and when
// the process holding the delivery lease is killed the other takes the
// lease and durable delivery goes on.
func TestTwoMeshesShareACluster(t *testing.T) {
	one, two := t.TempDir(), t.TempDir()
	conf := filepath.Join(t.TempDir(), "trust.conf")
	if err := os.WriteFile(conf, []byte(mustCotal(t, one, "broker", "config", "--space", "team")), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := os.ReadFile(filepath.Join(storeOf(t, one, "team"), "auth", "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	auth2 := filepath.Join(storeOf(t, two, "team"), "auth")
	if err := os.MkdirAll(auth2, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(auth2, "keys.json"), keys, 0o600); err != nil {
		t.Fatal(err)
	}
	c := testcluster.Start(t, 3, conf)

	_, pid1 := upDetached(t, one, "--space", "team", "--url", c.URL())
	waitFor(t, 30*time.Second, func() error {
		if d, _ := deliveryOf(t, one, "team"); !strings.HasPrefix(d, "serving") {
			return fmt.Errorf("first mesh's delivery: %s", d)
		}
		return nil
	})
	_, pid2 := upDetached(t, two, "--space", "team", "--url", c.URL())
	waitFor(t, 30*time.Second, func() error {
		d, managers := deliveryOf(t, two, "team")
		if managers != 2 || !strings.Contains(d, "/"+strconv.Itoa(pid1)+")") {
			return fmt.Errorf("second mesh sees %d managers, delivery %s; want both managers and the first mesh serving", managers, d)
		}
		return nil
	})

	m := mint(t, two, "member", "--space", "team", "--subscribe", "team")
	p := mint(t, two, "poster", "--space", "team", "--allow-publish", "team")
	if stored, other := inboxTexts(t, two, m.Creds); len(stored)+len(other) != 0 {
		t.Fatalf("fresh member's inbox: %v %v", stored, other)
	}

	if err := syscall.Kill(pid1, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid1)
	killed := time.Now()
	waitFor(t, 60*time.Second, func() error {
		if d, _ := deliveryOf(t, two, "team"); !strings.Contains(d, "/"+strconv.Itoa(pid2)+")") {
			return fmt.Errorf("after the lease holder died: %s", d)
		}
		return nil
	})
	t.Logf("the delivery lease moved %s after its holder was killed", time.Since(killed).Round(100*time.Millisecond))

	mustCotal(t, two, "--creds", p.Creds, "send", "msg", "team", "after the failover")
	var got []string
	waitFor(t, 30*time.Second, func() error {
		stored, _ := inboxTexts(t, two, m.Creds)
		got = append(got, stored...)
		if len(got) == 0 {
			return fmt.Errorf("the durable post has not reached the member")
		}
		return nil
	})
	if strings.Join(got, "|") != "after the failover" {
		t.Fatalf("member got %v", got)
	}
	if _, stderr, code := runCotal(t, two, "down", "--space", "team"); code != 0 {
		t.Fatalf("down: exit %d: %s", code, stderr)
	}
}
