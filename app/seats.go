package app

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
)

// seatMinter mints seat identities with the space's authority and writes
// each creds file 0600 into the seat's own launch directory (0700), the
// one part of the store the seat can see; in open mode a seat needs no
// credential and gets a named identity.
type seatMinter struct {
	paths config.Paths
	nc    *nats.Conn
	open  bool
}

// NewSeatMinter is the Minter a manager of this space uses.
func NewSeatMinter(p config.Paths, nc *nats.Conn, open bool) seat.Minter {
	return &seatMinter{paths: p, nc: nc, open: open}
}

func (m *seatMinter) MintSeat(ctx context.Context, r seat.MintRequest) (seat.Minted, error) {
	p := wire.Principal{Owner: "local", Actor: r.Name}
	if m.open {
		return seat.Minted{Principal: p, UID: wire.NewLifecycleUID()}, nil
	}
	id := broker.Identity{
		Space: m.paths.Space, Principal: p, Role: r.Role, Subscribe: r.Subscribe,
		AllowSubscribe: r.AllowSubscribe, AllowPublish: r.AllowPublish, Capabilities: r.Capabilities,
	}
	if id.AllowPublish == nil {
		id.AllowPublish = []string{}
	}
	c, _, err := Mint(ctx, m.paths, id, m.nc)
	if err != nil {
		return seat.Minted{}, err
	}
	dir := seat.LaunchDir(RunDir(m.paths), r.Name, c.Identity.UID)
	for _, d := range []string{RunDir(m.paths), filepath.Dir(dir), dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return seat.Minted{}, err
		}
	}
	path := filepath.Join(dir, "seat.creds")
	if err := broker.WriteCreds(path, c); err != nil {
		_ = os.RemoveAll(dir)
		return seat.Minted{}, err
	}
	return seat.Minted{Principal: p, UID: c.Identity.UID, Creds: path}, nil
}

// RunDir holds what lives only while its process does: the seats' launch
// directories.
func RunDir(p config.Paths) string { return filepath.Join(p.StoreDir, "run") }

// SeatProtect are the store's directories no seat may see into: the keys,
// the operator's and minted creds and identity records (auth), and the
// stored messages of everyone (JetStream). The manager adds the seats'
// launch directories.
func SeatProtect(p config.Paths) []string { return []string{p.AuthDir(), p.JetStreamDir()} }

// ManagerFile is where the mesh-hosted manager keeps its instance id.
func ManagerFile(p config.Paths) string { return filepath.Join(p.StoreDir, "manager.id") }
