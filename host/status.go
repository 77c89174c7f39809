package host

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/mesh/delivery"
	"github.com/cotal-go/cotal/seat"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/sandbox"
)

// Status is how a space's mesh is doing: `cotal status --json`.
type Status struct {
	Space      string    `json:"space"`
	Up         bool      `json:"up"`
	Reachable  bool      `json:"reachable"`
	URL        string    `json:"url,omitempty"`
	PID        int       `json:"pid,omitempty"`
	Mode       string    `json:"mode,omitempty"`
	Sync       string    `json:"sync,omitempty"`
	Started    time.Time `json:"started,omitzero"`
	Stopped    time.Time `json:"stopped,omitzero"`
	JetStream  bool      `json:"jetstream"`
	StoreBytes int64     `json:"storeBytes"`     // on disk under the JetStream dir
	DataBytes  int64     `json:"jetstreamBytes"` // what JetStream accounts as stored
	StoreLimit int64     `json:"storeLimit,omitempty"`
	StoreDir   string    `json:"storeDir"`
	Streams    int       `json:"streams,omitempty"`
	// Host is the address the mesh listens on beyond loopback (up
	// --host), with RemoteURLs what other machines dial there and TLSPin
	// the certificate's fingerprint they pin: every client must use TLS.
	Host       string   `json:"host,omitempty"`
	RemoteURLs []string `json:"remoteUrls,omitempty"`
	TLSPin     string   `json:"tlsPin,omitempty"`
	// Cluster is the NATS cluster a mesh on external servers lives on:
	// its meta leader and each stream's replicas and lag.
	Cluster *broker.Cluster `json:"cluster,omitempty"`
	// Leaf is the leaf link the mesh runs with: its domain, listener or
	// hub, and each other side with whether it is linked now.
	Leaf *LeafStatus `json:"leaf,omitempty"`
	// Delivery says whether the durable delivery service holds its lease
	// and serves (an open mesh has none). Managers counts the manager
	// instances that answered a status scatter (the probe ps uses);
	// ManagerInstances says of every registered one whether it answered.
	Delivery         string                 `json:"delivery,omitempty"`
	Managers         int                    `json:"managers"`
	ManagerInstances []client.ManagerStatus `json:"managerInstances"`
	ManagersError    string                 `json:"managersError,omitempty"`
	// SeatSandbox is how a seat started on this machine would be kept
	// from the store's keys and creds, found by launching a probe.
	SeatSandbox sandbox.Report `json:"seatSandbox"`
	// BrokerFileError names the damage of a broker.json that cannot be
	// read; the store lock still says whether the mesh runs.
	BrokerFileError string `json:"brokerFileError,omitempty"`
	// Preserved is the inventory `down --preserve-state` left for the
	// next up, when the mesh is down and one is there.
	Preserved *PreservedStatus `json:"preserved,omitempty"`
	Error     string           `json:"error,omitempty"`
}

// PreservedStatus is a resume inventory as status shows it: Ready says the
// next up resumes its seats (else it discards them).
type PreservedStatus struct {
	Seats   []string  `json:"seats"`
	Written time.Time `json:"written"`
	Ready   bool      `json:"ready"`
}

// StatusQuery says which mesh ReportStatus asks and how.
type StatusQuery struct {
	Paths  config.Paths
	Server string // a mesh reached there, whatever the store lock says
	Creds  string
	Trust  config.TLSTrust // how a TLS server is verified (--tls-pin, --tls-ca)
	// Managers scatters a status request over the registered managers.
	Managers func(ctx context.Context) ([]client.ManagerStatus, error)
}

// ReportStatus says how the mesh of a space is doing. The store lock says
// whether it runs; broker.json only how to reach it, and it is never
// trusted to say that the mesh is down.
func ReportStatus(ctx context.Context, q StatusQuery) Status {
	p := q.Paths
	r := Status{Space: p.Space, StoreDir: p.StoreDir, SeatSandbox: ProbeSandbox(p)}
	r.StoreBytes, _ = broker.DirSize(p.JetStreamDir())
	s, err := Probe(p)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if s.RecordErr != nil && !errors.Is(s.RecordErr, fs.ErrNotExist) {
		r.BrokerFileError = s.RecordErr.Error()
	}
	_, serr := s.Serving()
	if rec := s.Record; s.RecordErr == nil && (!s.Running || serr == nil) {
		r.URL, r.PID, r.Mode, r.Sync, r.Started, r.Stopped, r.StoreLimit = rec.URL, rec.PID, rec.Mode, rec.Sync, rec.Started, rec.Stopped, rec.MaxStore
		r.Host, r.RemoteURLs, r.TLSPin = rec.Host, broker.RemoteURLs(rec.Host, rec.URL), rec.TLSPin
	}
	r.Up = s.Running
	meshPID := 0 // the live process holding this store, when there is one
	if s.Running {
		r.PID, meshPID = s.PID, s.PID
		if serr != nil && q.Server == "" {
			r.Error = serr.Error()
			return r
		}
	}
	if !r.Up {
		if inv, ready, err := seat.ReadInventory(PreserveDir(p)); err == nil && inv != nil {
			r.Preserved = &PreservedStatus{Seats: append([]string{}, inv.Names()...), Written: inv.Written, Ready: ready}
		}
	}
	if !r.Up && q.Server == "" {
		return r
	}
	t, err := Resolve(p, q.Server, q.Creds, q.Trust)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	nc, err := t.Connect("cotal status")
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer nc.Close()
	r.Reachable, r.Up, r.URL = true, true, t.URL
	if cs, err := nc.TLSConnectionState(); err == nil && len(cs.PeerCertificates) > 0 {
		r.TLSPin = config.Fingerprint(cs.PeerCertificates[0].Raw) // the certificate this connection verified
	}
	js, err := jetstream.New(nc)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	info, err := js.AccountInfo(ctx)
	if err != nil {
		r.Error = "JetStream: " + err.Error()
		return r
	}
	r.JetStream, r.DataBytes, r.Streams = true, int64(info.Store), info.Streams
	if t.Record.External || nc.ConnectedClusterName() != "" {
		r.Cluster = clusterStatus(ctx, t, nc)
	}
	r.Leaf = leafStatus(ctx, js, r.Space, t.Record.Leaf)
	localPID := meshPID // this store's mesh, whose delivery service serves or stands by
	if t.Record.External {
		meshPID = 0 // on a cluster another machine's mesh, or another store's here, may serve
	}
	standby := 0 // on a cluster, this store's mesh: its delivery service stands by unless it holds the lease
	if t.Record.External {
		standby = localPID
	}
	r.Delivery = deliveryState(ctx, js, r.Space, r.Mode, meshPID, standby)
	r.ManagerInstances = []client.ManagerStatus{}
	if ms, err := q.Managers(ctx); err != nil {
		r.ManagersError = err.Error()
		if ms != nil {
			r.ManagerInstances = ms
		}
	} else if ms != nil {
		r.ManagerInstances = ms
	}
	for _, m := range r.ManagerInstances {
		if m.Answered {
			r.Managers++
		}
	}
	return r
}

// deliveryState says in words whether the delivery service serves: a
// lease whose holder is gone is never reported as serving. standby, when
// not 0, is the pid of this store's mesh on a shared cluster: a lease
// another process holds has it say that this host's service stands by.
func deliveryState(ctx context.Context, js jetstream.JetStream, space, mode string, meshPID, standby int) string {
	if mode == config.ModeOpen {
		return "none (open mode: live only)"
	}
	l, err := delivery.ReadLease(ctx, js, space)
	switch {
	case errors.Is(err, delivery.ErrNoLease):
		return "NOT SERVING (no lease: durable channels are live only)"
	case err != nil:
		return "unknown (" + err.Error() + ")"
	case l.Holder == "":
		return "starting"
	case l.HolderGone(meshPID, broker.PIDAlive):
		return "NOT SERVING (the lease is held by " + l.Holder + ", a process that is gone; durable channels wait until a mesh takes it over)"
	case !l.Ready:
		return "starting"
	}
	if standby > 0 && !l.HeldBy(standby) {
		return "serving (" + l.Holder + "); this host's delivery service stands by, and takes the lease when the holder's delivery endpoint stops answering"
	}
	return "serving (" + l.Holder + ")"
}

// ProbeSandbox launches a probe as a seat of this space would be
// launched, and says how it was kept from the store's keys and creds.
func ProbeSandbox(p config.Paths) sandbox.Report {
	exe, err := os.Executable()
	if err != nil {
		return sandbox.Report{Mode: sandbox.None, Reason: "cannot find the cotal executable, the seat launcher: " + err.Error()}
	}
	return sandbox.Probe(exe, append(SeatProtect(p), filepath.Dir(seat.LaunchDir(issue.RunDir(p), "x", "x"))))
}
