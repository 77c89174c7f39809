// Package testcluster starts a real NATS cluster for tests: n nats-server
// instances in this process, on loopback ports, routed to each other, with
// JetStream on a store of their own each. A node can be shut down and
// started again on the same ports and store. Only tests import it.
package testcluster

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Cluster is a running test cluster.
type Cluster struct {
	t      testing.TB
	name   string
	conf   string // a nats-server config file every node loads first; "" none
	client []int
	route  []int
	stores []string

	mu   sync.Mutex
	srvs []*server.Server // nil where a node is down
}

// Start starts an n-node cluster and waits until its JetStream meta group
// has a leader. conf, when not "", is a nats-server configuration file
// (the trust a cluster operator adds) every node loads before the test's
// ports, routes and store are set. The cluster stops with the test.
func Start(t testing.TB, n int, conf string) *Cluster {
	t.Helper()
	c := &Cluster{t: t, name: "cotal-test", conf: conf, srvs: make([]*server.Server, n)}
	for range n {
		c.client = append(c.client, freePort(t))
		c.route = append(c.route, freePort(t))
		c.stores = append(c.stores, t.TempDir())
	}
	t.Cleanup(c.Shutdown)
	for i := range n {
		c.Restart(i)
	}
	c.WaitMetaLeader(30 * time.Second)
	return c
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

func (c *Cluster) options(i int) *server.Options {
	o := &server.Options{}
	if c.conf != "" {
		var err error
		if o, err = server.ProcessConfigFile(c.conf); err != nil {
			c.t.Fatalf("loading %s: %v", c.conf, err)
		}
	}
	var routes []string
	for j, p := range c.route {
		if j != i {
			routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
		}
	}
	o.ServerName = c.NodeName(i)
	o.Host, o.Port = "127.0.0.1", c.client[i]
	o.NoSigs, o.NoLog = true, true
	o.JetStream, o.StoreDir = true, c.stores[i]
	if len(c.route) > 1 { // one node is a lone server, in no cluster
		o.Cluster = server.ClusterOpts{Name: c.name, Host: "127.0.0.1", Port: c.route[i]}
		o.Routes = server.RoutesFromStr(strings.Join(routes, ","))
	}
	o.MaxControlLine = 64 << 10
	return o
}

// Restart starts node i (again) on its ports and store.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	s, err := server.NewServer(c.options(i))
	if err != nil {
		c.t.Fatalf("node %d: %v", i, err)
	}
	s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		s.Shutdown()
		c.t.Fatalf("node %d did not accept connections", i)
	}
	c.mu.Lock()
	c.srvs[i] = s
	c.mu.Unlock()
}

// Kill shuts node i down and waits until it is gone.
func (c *Cluster) Kill(i int) {
	c.mu.Lock()
	s := c.srvs[i]
	c.srvs[i] = nil
	c.mu.Unlock()
	if s != nil {
		s.Shutdown()
		s.WaitForShutdown()
	}
}

// Shutdown stops every node.
func (c *Cluster) Shutdown() {
	for i := range c.srvs {
		c.Kill(i)
	}
}

// MetaLeader is the JetStream meta leader's server name as a running node
// sees it, "" while there is none.
func (c *Cluster) MetaLeader() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.srvs {
		if s == nil {
			continue
		}
		if len(c.srvs) == 1 || s.JetStreamIsLeader() {
			return s.Name()
		}
	}
	return ""
}

// WaitMetaLeader polls until the cluster has a meta leader that counts
// every running node among its current JetStream peers (so each is routed
// and placeable), and every running node has JetStream on.
func (c *Cluster) WaitMetaLeader(total time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(total)
	for {
		ok := c.MetaLeader() != ""
		c.mu.Lock()
		running := 0
		peers := 0
		for _, s := range c.srvs {
			if s == nil {
				continue
			}
			running++
			if !s.JetStreamEnabled() {
				ok = false
			}
			switch {
			case len(c.srvs) == 1: // a lone server has no meta group to ask
				peers = 1
			case s.JetStreamIsLeader():
				peers = len(s.JetStreamClusterPeers())
			}
		}
		c.mu.Unlock()
		ok = ok && peers == running
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("cluster %s has no JetStream meta leader after %s", c.name, total)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
