package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Mesh modes as recorded in broker.json.
const (
	ModeAuth = "auth" // per-agent credentials, broker-enforced ACLs
	ModeOpen = "open" // no auth, owner local, live-only
)

// Sync modes of the JetStream store.
const (
	SyncAlways   = "always"   // fsync before every ack
	SyncInterval = "interval" // fsync on a timer: an OS crash can lose acked writes
)

// BrokerRecord is broker.json: what a running (or last run) mesh tells its
// clients. It is written after the broker is ready and provisioned.
type BrokerRecord struct {
	Space    string    `json:"space"`
	URL      string    `json:"url"`
	PID      int       `json:"pid"`
	Mode     string    `json:"mode"`
	Sync     string    `json:"sync"`
	Started  time.Time `json:"started"`
	Stopped  time.Time `json:"stopped,omitzero"`
	StoreDir string    `json:"storeDir"`
	MaxStore int64     `json:"maxStore"`
	// Folder is the folder the mesh serves (see Folder): the CLI run there
	// without a space named finds this mesh by it.
	Folder string `json:"folder,omitempty"`
	// External says the mesh lives on NATS servers cotal did not start
	// (up --url): URL then lists them, comma-separated.
	External bool `json:"external,omitempty"`
	// TLSPin is the SHA-256 of the certificate the mesh serves when it is
	// reachable from other machines (up --host): every client must dial
	// it with TLS, and a client of this machine pins it.
	TLSPin string `json:"tlsPin,omitempty"`
	// Host is the address the mesh listens on beyond loopback (up --host;
	// 0.0.0.0 is every interface), "" for loopback only.
	Host string `json:"host,omitempty"`
	// Leaf is the leaf link the mesh's broker takes part in, nil for none.
	Leaf *LeafRecord `json:"leaf,omitempty"`
}

// LeafRecord is a running mesh's leaf link: its own JetStream domain, the
// leafnode listener it serves (a hub) or the hub it dials (a leaf), and
// the other sides' domains its streams source.
type LeafRecord struct {
	Domain string   `json:"domain"`
	Listen string   `json:"listen,omitempty"`
	Remote string   `json:"remote,omitempty"`
	Peers  []string `json:"peers"`
}

// ReadBrokerRecord reads broker.json from a store dir. A missing file is
// reported with fs.ErrNotExist wrapped.
func ReadBrokerRecord(p Paths) (BrokerRecord, error) {
	var r BrokerRecord
	b, err := os.ReadFile(p.BrokerFile())
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s is not valid: %w", p.BrokerFile(), err)
	}
	return r, nil
}

// WriteBrokerRecord writes broker.json atomically.
func WriteBrokerRecord(p Paths, r BrokerRecord) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(p.BrokerFile(), append(b, '\n'), 0o644)
}

// meshEntry is one file under <data>/meshes: it remembers where a space's
// store is, so `cotal meshes` finds spaces whose store was moved with
// --store-dir.
type meshEntry struct {
	Space    string `json:"space"`
	StoreDir string `json:"storeDir"`
}

func meshesDir(data string) string { return filepath.Join(data, "meshes") }

// Remember records that space keeps its store at storeDir.
func Remember(data, space, storeDir string) error {
	if err := os.MkdirAll(meshesDir(data), 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(meshEntry{Space: space, StoreDir: storeDir})
	return WriteFileAtomic(filepath.Join(meshesDir(data), space+".json"), b, 0o644)
}

// SpacePaths returns the paths of space: its remembered store dir if it has
// one, else the default under data. An explicit storeDir wins.
func SpacePaths(data, space, storeDir string) (Paths, error) {
	if storeDir != "" {
		abs, err := filepath.Abs(storeDir)
		if err != nil {
			return Paths{}, err
		}
		return Paths{Space: space, StoreDir: abs}, nil
	}
	b, err := os.ReadFile(filepath.Join(meshesDir(data), space+".json"))
	if err == nil {
		var e meshEntry
		if json.Unmarshal(b, &e) == nil && e.StoreDir != "" {
			return Paths{Space: space, StoreDir: e.StoreDir}, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Paths{}, err
	}
	return Paths{Space: space, StoreDir: DefaultStoreDir(data, space)}, nil
}

// KnownSpaces lists every space this data dir remembers, sorted.
func KnownSpaces(data string) ([]Paths, error) {
	ents, err := os.ReadDir(meshesDir(data))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Paths
	for _, de := range ents {
		name, ok := strings.CutSuffix(de.Name(), ".json")
		if !ok || de.IsDir() {
			continue
		}
		p, err := SpacePaths(data, name, "")
		if err != nil {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Space < out[j].Space })
	return out, nil
}
