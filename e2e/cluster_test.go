package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
