package host

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
)

// External says, for a mesh on servers cotal did not start, which cluster
// it lives on and how many copies of each stream it keeps there; "" for
// the embedded broker.
func (h *Host) External() string {
	if h.broker == nil || !h.broker.External() {
		return ""
	}
	nc, err := h.broker.Internal()
	if err != nil {
		return fmt.Sprintf("external NATS at %s (unreachable now: %v)", h.broker.URL(), err)
	}
	cluster := nc.ConnectedClusterName()
	if cluster == "" {
		return fmt.Sprintf("external NATS server %s (no cluster: streams have 1 replica)", nc.ConnectedServerName())
	}
	return fmt.Sprintf("external NATS cluster %s (connected to %s; new streams get %d replicas)", cluster, nc.ConnectedServerName(), broker.Replicas(nc))
}

// clusterStatus reads the cluster a mesh lives on through nc, and its meta
// leader through the space's system account when this machine holds the
// space's keys (an authenticated mesh; an open one has no such account).
func clusterStatus(ctx context.Context, t Target, nc *nats.Conn) *broker.Cluster {
	var sys *nats.Conn
	if t.Record.Mode == config.ModeAuth {
		if _, err := os.Stat(broker.KeysFile(t.Paths)); err == nil {
			if auth, err := broker.LoadAuthority(t.Paths); err == nil {
				sys, _ = auth.ConnectSystem(t.URL, nats.Timeout(3*time.Second))
			}
		}
	}
	if sys != nil {
		defer sys.Close()
	}
	c, err := broker.ClusterState(ctx, nc, sys, t.Paths.Space)
	if err != nil && c.MetaError == "" {
		c.MetaError = "reading the cluster: " + err.Error()
	}
	return &c
}
