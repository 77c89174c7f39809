// Package testcluster starts a real NATS cluster for tests: n nats-server
// processes, built from the nats-server module this project depends on,
// on loopback ports, routed to each other, with JetStream on a store of
// their own each. A node can be killed (SIGKILL, as a machine that dies)
// and started again on the same ports and store. Only tests import it.
package testcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Cluster is a running test cluster.
type Cluster struct {
	t      testing.TB
	name   string
	bin    string // the nats-server binary
	conf   string // a nats-server config file every node includes first; "" none
	client []int
	route  []int
	mon    []int // each node's monitoring port, which the test reads the meta group from
	dirs   []string

	mu    sync.Mutex
	procs []*node // nil where a node is down
}

// node is one running nats-server process.
type node struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process is reaped
}

// Start starts an n-node cluster and waits until its JetStream meta group
// has a leader. conf, when not "", is a nats-server configuration file
// (the trust a cluster operator adds) every node's configuration starts
// with, before the test's ports, routes and store. The cluster stops with
// the test.
func Start(t testing.TB, n int, conf string) *Cluster {
	t.Helper()
	c := &Cluster{t: t, name: "cotal-test", bin: build(t), conf: conf, procs: make([]*node, n)}
	for range n {
		c.client = append(c.client, freePort(t))
		c.route = append(c.route, freePort(t))
		c.mon = append(c.mon, freePort(t))
		c.dirs = append(c.dirs, t.TempDir())
	}
	t.Cleanup(c.Shutdown)
	for i := range n {
		c.Restart(i)
	}
	c.WaitMetaLeader(60 * time.Second)
	return c
}

// build compiles the nats-server command of the module this project
// requires into a directory of the test's, so the nodes run the same
// server code as the embedded broker.
func build(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "nats-server")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building nats-server from the module: %v\n%s", err, out)
	}
	return bin
}

// URLs are the nodes' client URLs.
func (c *Cluster) URLs() []string {
	var us []string
	for _, p := range c.client {
		us = append(us, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	return us
}

// URL is URLs comma-separated, as nats.Connect and `cotal up --url` take them.
func (c *Cluster) URL() string { return strings.Join(c.URLs(), ",") }

// Name is the cluster's name.
func (c *Cluster) Name() string { return c.name }

// NodeName is node i's server name.
func (c *Cluster) NodeName(i int) string { return fmt.Sprintf("n%d", i) }

// config is node i's configuration file: the operator's block, then the
// node's name, ports, store and routes.
func (c *Cluster) config(i int) string {
	var b strings.Builder
	if c.conf != "" {
		trust, err := os.ReadFile(c.conf)
		if err != nil {
			c.t.Fatalf("reading %s: %v", c.conf, err)
		}
		b.Write(trust)
		b.WriteString("\n")
	} else {
		b.WriteString("max_control_line: 65536\n")
	}
	fmt.Fprintf(&b, "server_name: %s\nhost: 127.0.0.1\nport: %d\nhttp: \"127.0.0.1:%d\"\n", c.NodeName(i), c.client[i], c.mon[i])
	fmt.Fprintf(&b, "jetstream { store_dir: %q }\n", filepath.Join(c.dirs[i], "store"))
	if len(c.route) > 1 { // one node is a lone server, in no cluster
		var routes []string
		for j, p := range c.route {
			if j != i {
				routes = append(routes, fmt.Sprintf("%q", fmt.Sprintf("nats://127.0.0.1:%d", p)))
			}
		}
		fmt.Fprintf(&b, "cluster { name: %s, host: 127.0.0.1, port: %d, routes: [%s] }\n", c.name, c.route[i], strings.Join(routes, ", "))
	}
	path := filepath.Join(c.dirs[i], "node.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return path
}

// Restart starts node i (again) on its ports and store and waits until it
// serves clients with JetStream on.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	logPath := filepath.Join(c.dirs[i], "node.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(c.bin, "-c", c.config(i))
	cmd.Stdout, cmd.Stderr = log, log
	// A node outlives no test binary, however that binary ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	log.Close()
	if err != nil {
		c.t.Fatalf("node %d: %v", i, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	c.mu.Lock()
	c.procs[i] = &node{cmd: cmd, exited: exited}
	c.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ok struct{ Status string }
		if c.get(i, "/healthz?js-enabled-only=true", &ok) == nil && ok.Status == "ok" {
			return
		}
		select {
		case <-exited:
			c.t.Fatalf("node %d exited at start: %s", i, tail(logPath))
		default:
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("node %d did not serve with JetStream within 30 s: %s", i, tail(logPath))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill kills node i with SIGKILL, as a machine that dies, and waits until
// it is gone.
func (c *Cluster) Kill(i int) {
	c.mu.Lock()
	n := c.procs[i]
	c.procs[i] = nil
	c.mu.Unlock()
	if n == nil {
		return
	}
	_ = n.cmd.Process.Kill()
	<-n.exited
}

// Shutdown kills every node.
func (c *Cluster) Shutdown() {
	for i := range c.procs {
		c.Kill(i)
	}
}

func (c *Cluster) running(i int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.procs[i] != nil
}

// get reads one of node i's monitoring pages as JSON.
func (c *Cluster) get(i int, page string, v any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", c.mon[i], page), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// jsz is the part of a node's /jsz page the tests read.
type jsz struct {
	Disabled bool `json:"disabled"`
	Meta     *struct {
		Leader   string `json:"leader"`
		Replicas []struct {
			Name    string `json:"name"`
			Current bool   `json:"current"`
			Offline bool   `json:"offline"`
		} `json:"replicas"`
	} `json:"meta_cluster"`
}

// leader is the meta leader as the leader itself says: a running node
// that names itself, with the peers it counts current; "" while none.
func (c *Cluster) leader() (string, int) {
	for i := range c.procs {
		if !c.running(i) {
			continue
		}
		if len(c.procs) == 1 {
			return c.NodeName(i), 1
		}
		var z jsz
		if c.get(i, "/jsz", &z) != nil || z.Disabled || z.Meta == nil || z.Meta.Leader != c.NodeName(i) {
			continue
		}
		peers := 1
		for _, r := range z.Meta.Replicas {
			if r.Current && !r.Offline {
				peers++
			}
		}
		return c.NodeName(i), peers
	}
	return "", 0
}

// MetaLeader is the JetStream meta leader's server name, "" while there
// is none.
func (c *Cluster) MetaLeader() string {
	l, _ := c.leader()
	return l
}

// WaitMetaLeader polls until the cluster has a meta leader that counts
// every running node among its current JetStream peers (so each is routed
// and placeable).
func (c *Cluster) WaitMetaLeader(total time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(total)
	for {
		running := 0
		for i := range c.procs {
			if c.running(i) {
				running++
			}
		}
		if l, peers := c.leader(); l != "" && peers == running {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("cluster %s has no JetStream meta leader counting its %d running nodes after %s", c.name, running, total)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tail is the end of a node's log, for a failure message.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// freePort is a port on loopback that nothing listens on, taken below
// the kernel's ephemeral range where it can: a port the kernel handed out
// for :0 and that was closed again may be taken as the local port of any
// outgoing connection on the machine before its node binds it, while no
// connection is given a port below that range unasked.
func freePort(t testing.TB) int {
	t.Helper()
	if low := ephemeralLow(); low > 11000 {
		for range 200 {
			p := 10000 + rand.IntN(low-10000)
			if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
				l.Close()
				return p
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ephemeralLow is the lowest port the kernel hands out for :0 and for
// outgoing connections; 0 when it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	low, _ := strconv.Atoi(f[0])
	return low
}
