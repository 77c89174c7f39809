package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/internal/testcluster"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/seat/client"
)

// censusIn is `cotal ps --json` run in home: which manager runs each
// running seat.
func censusIn(t *testing.T, home, dir string) map[string]string {
	t.Helper()
	out, _, _ := runIn(t, home, dir, "ps", "--json")
	var cs client.Census
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		return nil
	}
	seats := map[string]string{}
	for _, r := range cs.Rows {
		if r.Running() {
			seats[r.Name] = r.Manager
		}
	}
	return seats
}

// TestSecondHostJoinsAsManagerOnly runs a space on a trusted cluster from
// two hosts (two stores, as two machines would have): the first with
// `up --url`, the second with `up --url --manager-only` and the space's
// keys copied over. Each spawns a seat on its own manager; ps, input,
// screen, attach and the dashboard on the first host reach the second's
// seat; killing the first host's mesh (it holds the delivery lease) moves
// the lease to the second in seconds and a durable post after the kill
// reaches its member once.
func TestSecondHostJoinsAsManagerOnly(t *testing.T) {
	one, two := t.TempDir(), t.TempDir()
	dirOne, dirTwo := project(t, shellPersona), project(t, shellPersona)
	conf := filepath.Join(t.TempDir(), "trust.conf")
	stdout, stderr, code := runIn(t, one, dirOne, "broker", "config")
	if code != 0 {
		t.Fatalf("broker config: exit %d\n%s", code, stderr)
	}
	if err := os.WriteFile(conf, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	c := testcluster.Start(t, 3, conf)

	// Refused, each saying what to do: no servers, no keys here, a space
	// no first host provisioned yet.
	if _, stderr, code := runIn(t, two, dirTwo, "up", "--manager-only"); code != 2 || !strings.Contains(stderr, "--url") {
		t.Fatalf("up --manager-only without --url: exit %d %q, want 2 naming --url", code, stderr)
	}
	if _, stderr, code := runIn(t, two, dirTwo, "up", "--url", c.URL(), "--manager-only"); code != 1 || !strings.Contains(stderr, "keys.json") {
		t.Fatalf("up --manager-only without the space's keys: exit %d %q, want 1 naming keys.json", code, stderr)
	}
	keys, err := os.ReadFile(filepath.Join(storeOf(t, one, "seats"), "auth", "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	auth2 := filepath.Join(storeOf(t, two, "seats"), "auth")
	if err := os.MkdirAll(auth2, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(auth2, "keys.json"), keys, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runIn(t, two, dirTwo, "up", "--url", c.URL(), "--manager-only"); code != 1 || !strings.Contains(stderr, "not provisioned") || !strings.Contains(stderr, "without --manager-only") {
		t.Fatalf("up --manager-only before the first host: exit %d %q, want 1 saying to start the first host", code, stderr)
	}

	if _, stderr, code := runIn(t, one, dirOne, "up", "--detach", "--url", c.URL()); code != 0 {
		t.Fatalf("up on the first host: exit %d\n%s", code, stderr)
	}
	t.Cleanup(func() { runIn(t, one, dirOne, "down", "--with-agents") })
	waitFor(t, 30*time.Second, func() error {
		if d, _ := deliveryOf(t, one, "seats"); !strings.HasPrefix(d, "serving") {
			return fmt.Errorf("first host's delivery: %s", d)
		}
		return nil
	})
	out, stderr, code := runIn(t, two, dirTwo, "up", "--detach", "--url", c.URL(), "--manager-only")
	if code != 0 || !strings.Contains(out, "manager only") {
		t.Fatalf("up --manager-only on the second host: exit %d\n%s\n%s", code, out, stderr)
	}
	t.Cleanup(func() { runIn(t, two, dirTwo, "down", "--with-agents") })
	pid1 := pidOfMesh(t, one)
	pid2 := pidOfMesh(t, two)
	waitFor(t, 30*time.Second, func() error {
		d, managers := deliveryOf(t, two, "seats")
		if managers != 2 || !strings.Contains(d, "/"+strconv.Itoa(pid1)+")") {
			return fmt.Errorf("the second host sees %d managers, delivery %s; want both and the first host serving", managers, d)
		}
		return nil
	})

	for _, s := range []struct{ home, dir, name string }{{one, dirOne, "ashell"}, {two, dirTwo, "bshell"}} {
		if out, stderr, code := runIn(t, s.home, s.dir, "spawn", "shell", "--name", s.name); code != 0 {
			t.Fatalf("spawn %s: exit %d\n%s%s", s.name, code, out, stderr)
		}
	}
	var seats map[string]string
	for _, h := range []struct{ home, dir string }{{one, dirOne}, {two, dirTwo}} {
		waitFor(t, 20*time.Second, func() error {
			seats = censusIn(t, h.home, h.dir)
			if seats["ashell"] == "" || seats["bshell"] == "" {
				return fmt.Errorf("ps lists %v, want ashell and bshell", seats)
			}
			return nil
		})
	}
	if seats["ashell"] == seats["bshell"] {
		t.Fatalf("both seats run on manager %s: a spawn on each host goes to its own", seats["ashell"])
	}

	// The second host's seat, from the first host: input, screen, attach.
	if out, stderr, code := runIn(t, one, dirOne, "input", "bshell", "echo from-one-$((6*7))"); code != 0 {
		t.Fatalf("input from the first host: exit %d\n%s%s", code, out, stderr)
	}
	waitSeatScreen(t, one, dirOne, "bshell", "the input typed from the first host", func(s string) bool { return hasLine(s, "from-one-42") })
	tc := startTerm(t, one, dirOne, 100, 30, "")
	tc.waitScreen("outer$")
	tc.enter(cotalIn("attach", "bshell") + "; echo EXIT=$?")
	tc.enter("echo attached-$((5*5))")
	tc.waitLine(`^attached-25\s*$`)
	tc.keys("C-]")
	tc.waitScreen("detached from bshell", "EXIT=0")
	d := startDashboardIn(t, one, dirOne, "--space", "seats")
	d.waitScreen("SEATS · 2", "ashell", "bshell")

	// The first host's seat stops, so its mesh dies holding no seat.
	if out, stderr, code := runIn(t, one, dirOne, "stop", "ashell"); code != 0 {
		t.Fatalf("stop ashell: %s%s", out, stderr)
	}
	m := mint(t, two, "member", "--space", "seats", "--subscribe", "team")
	p := mint(t, two, "poster", "--space", "seats", "--allow-publish", "team")
	if stored, other := inboxTexts(t, two, m.Creds); len(stored)+len(other) != 0 {
		t.Fatalf("fresh member's inbox: %v %v", stored, other)
	}

	// Status on each host says which serves and that the other stands by.
	if d, _ := deliveryOf(t, two, "seats"); !strings.Contains(d, "/"+strconv.Itoa(pid1)+")") || !strings.Contains(d, "this host's delivery service stands by") {
		t.Fatalf("status on the manager-only host: delivery %q, want the first host serving and this one standing by", d)
	}
	if d, _ := deliveryOf(t, one, "seats"); strings.Contains(d, "stands by") {
		t.Fatalf("status on the host holding the lease: delivery %q says it stands by", d)
	}

	// The lease as the cluster holds it, read every 20 ms as the second
	// host's operator: the takeover's figure, not status's latency.
	nc, err := nats.Connect(c.URL(), nats.UserCredentials(config.Paths{Space: "seats", StoreDir: storeOf(t, two, "seats")}.OperatorCreds()))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if err := syscall.Kill(pid1, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	waitFor(t, 60*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l, err := delivery.ReadLease(ctx, js, "seats")
		if err != nil || !l.Ready || !strings.HasSuffix(l.Holder, "/"+strconv.Itoa(pid2)) {
			return fmt.Errorf("the lease after the holder was killed: %+v %v", l, err)
		}
		return nil
	})
	t.Logf("the manager-only host's delivery service held the lease, ready, %s after the holder was killed (lease TTL 30s)", time.Since(killed).Round(10*time.Millisecond))
	waitGone(t, pid1)
	waitFor(t, 60*time.Second, func() error {
		if d, _ := deliveryOf(t, two, "seats"); !strings.Contains(d, "/"+strconv.Itoa(pid2)+")") || strings.Contains(d, "stands by") {
			return fmt.Errorf("after the lease holder died: %s", d)
		}
		return nil
	})
	if log, err := os.ReadFile(filepath.Join(storeOf(t, two, "seats"), "mesh.log")); err == nil {
		for _, l := range strings.Split(string(log), "\n") {
			if strings.Contains(l, "took over the lease") || strings.Contains(l, "after the first probe") {
				t.Logf("second host: %s", l)
			}
		}
	}

	mustCotal(t, two, "--space", "seats", "--creds", p.Creds, "send", "msg", "team", "after the failover")
	var got []string
	waitFor(t, 30*time.Second, func() error {
		stored, _ := inboxTexts(t, two, m.Creds)
		got = append(got, stored...)
		if len(got) == 0 {
			return fmt.Errorf("the durable post has not reached the member")
		}
		return nil
	})
	// A marker sent after: whatever came twice would come before it.
	mustCotal(t, two, "--space", "seats", "--creds", p.Creds, "send", "msg", "team", "marker")
	waitFor(t, 30*time.Second, func() error {
		stored, _ := inboxTexts(t, two, m.Creds)
		got = append(got, stored...)
		if got[len(got)-1] != "marker" {
			return fmt.Errorf("the marker has not come yet: %v", got)
		}
		return nil
	})
	if strings.Join(got, "|") != "after the failover|marker" {
		t.Fatalf("the member got %v, want the post once and then the marker", got)
	}
	if _, stderr, code := runIn(t, two, dirTwo, "down", "--with-agents"); code != 0 {
		t.Fatalf("down on the second host: exit %d: %s", code, stderr)
	}
}

// pidOfMesh is the pid of the mesh process status names in home.
func pidOfMesh(t *testing.T, home string) int {
	t.Helper()
	stdout, _, _ := runCotal(t, home, "status", "--json", "--space", "seats")
	var s struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(stdout), &s); err != nil || s.PID == 0 {
		t.Fatalf("status --json names no pid: %v\n%s", err, stdout)
	}
	return s.PID
}
