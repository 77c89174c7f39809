package broker

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"sort"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// MaxReplicas is the most copies of a stream or bucket a space keeps: three
// survive the loss of any one server with a quorum left.
const MaxReplicas = 3

// Replicas is how many copies of each stream and bucket the space keeps on
// the server nc is connected to: min(MaxReplicas, the cluster's size), 1
// on a server in no cluster. The size is the count of distinct client
// addresses the cluster advertises (the member nc is on and those it
// names); a server that advertises none counts as one, and provisioning
// lowers the count if the cluster has fewer JetStream peers than that.
func Replicas(nc *nats.Conn) int {
	if nc.ConnectedClusterName() == "" {
		return 1
	}
	seen := map[string]bool{}
	for _, s := range nc.Servers() {
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			seen[u.Host] = true
		}
	}
	return max(1, min(MaxReplicas, len(seen)))
}

// PlacementWait is how long provisioning keeps asking a cluster for the
// replicas it counted before it settles for fewer: a cluster just started
// may not have every peer in its JetStream group yet.
const PlacementWait = 10 * time.Second

// withReplicas runs create with *replicas copies; while the cluster cannot
// place that many it asks again for PlacementWait, then lowers the count
// one at a time down to 1.
func withReplicas(ctx context.Context, replicas *int, create func() error) error {
	deadline := time.Now().Add(PlacementWait)
	for {
		err := create()
		if err == nil || !tooFewPeers(err) || *replicas <= 1 {
			return err
		}
		if time.Now().After(deadline) {
			*replicas--
			continue
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// tooFewPeers reports whether a create failed because the cluster cannot
// place that many replicas: a server in no cluster, or too few peers.
func tooFewPeers(err error) bool {
	var api *jetstream.APIError
	if !errors.As(err, &api) {
		return false
	}
	switch api.ErrorCode {
	case 10074, 10005, 10023: // replicas not supported, no suitable peers, insufficient resources
		return true
	}
	return false
}

// StreamState is one stream's replication as `cotal status` shows it.
type StreamState struct {
	Name     string    `json:"name"`
	Replicas int       `json:"replicas"`
	Leader   string    `json:"leader,omitempty"`
	Messages uint64    `json:"messages"`
	Peers    []PeerLag `json:"peers,omitempty"`
	// Lag is the most operations any replica is behind the leader.
	Lag uint64 `json:"lag"`
}

// PeerLag is a follower of a stream's leader.
type PeerLag struct {
	Name    string `json:"name"`
	Current bool   `json:"current"`
	Offline bool   `json:"offline,omitempty"`
	Lag     uint64 `json:"lag"`
}

// Cluster is the NATS cluster a mesh lives on.
type Cluster struct {
	Name      string `json:"name,omitempty"` // "" on a server in no cluster
	Connected string `json:"connected"`      // the server this report was read from
	// MetaLeader is the JetStream meta leader, read through the system
	// account; "" when that account is out of reach (MetaError says why).
	MetaLeader string        `json:"metaLeader,omitempty"`
	MetaPeers  int           `json:"metaPeers,omitempty"`
	MetaError  string        `json:"metaError,omitempty"`
	Streams    []StreamState `json:"streams"`
}

// SpaceStreams names the streams Provision makes for space, the buckets'
// among them, sorted.
func SpaceStreams(space string) []string {
	var ns []string
	for _, c := range StreamConfigs(space, 0) {
		ns = append(ns, c.Name)
	}
	for _, c := range BucketConfigs(space, 0) {
		ns = append(ns, "KV_"+c.Bucket)
	}
	sort.Strings(ns)
	return ns
}

// ClusterState reads the replication of the space's streams and buckets
// from the server nc is connected to; sys, when not nil, is a
// system-account connection to the same cluster, through which the meta
// leader is read. A stream not there is left out.
func ClusterState(ctx context.Context, nc, sys *nats.Conn, space string) (Cluster, error) {
	c := Cluster{Name: nc.ConnectedClusterName(), Connected: nc.ConnectedServerName(), Streams: []StreamState{}}
	js, err := jetstream.New(nc)
	if err != nil {
		return c, err
	}
	for _, n := range SpaceStreams(space) {
		s, err := js.Stream(ctx, n)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return c, err
		}
		info := s.CachedInfo()
		st := StreamState{Name: n, Replicas: max(1, info.Config.Replicas), Messages: info.State.Msgs}
		if ci := info.Cluster; ci != nil {
			st.Leader = ci.Leader
			for _, p := range ci.Replicas {
				st.Peers = append(st.Peers, PeerLag{Name: p.Name, Current: p.Current, Offline: p.Offline, Lag: p.Lag})
				st.Lag = max(st.Lag, p.Lag)
			}
		}
		c.Streams = append(c.Streams, st)
	}
	switch {
	case c.Name == "":
		c.MetaLeader = c.Connected // a lone server leads itself
	case sys == nil:
		c.MetaError = "the meta leader is read through the system account, which this mesh cannot reach (an open cluster)"
	default:
		c.MetaLeader, c.MetaPeers, err = metaLeader(ctx, sys)
		if err != nil {
			c.MetaError = err.Error()
		}
	}
	return c, nil
}

// metaLeader asks the server sys is connected to for its JetStream view
// of the meta group.
func metaLeader(ctx context.Context, sys *nats.Conn) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	m, err := sys.RequestWithContext(ctx, "$SYS.REQ.SERVER.PING.JSZ", []byte(`{}`))
	if err != nil {
		return "", 0, err
	}
	var resp struct {
		Data struct {
			Meta *struct {
				Leader      string `json:"leader"`
				ClusterSize int    `json:"cluster_size"`
			} `json:"meta_cluster"`
		} `json:"data"`
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return "", 0, err
	}
	if resp.Error != nil {
		return "", 0, errors.New(resp.Error.Description)
	}
	if resp.Data.Meta == nil {
		return "", 0, errors.New("the server reports no meta group")
	}
	return resp.Data.Meta.Leader, resp.Data.Meta.ClusterSize, nil
}
