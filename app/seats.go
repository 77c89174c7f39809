package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat"
)

// seatMinter mints seat identities with the space's authority and keeps
// each creds file 0600 under the store's auth dir; in open mode a seat
// needs no credential and gets a named identity.
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
		HostedBy: r.HostedBy,
	}
	if id.AllowPublish == nil {
		id.AllowPublish = []string{}
	}
	c, _, err := Mint(ctx, m.paths, id, m.nc)
	if err != nil {
		return seat.Minted{}, err
	}
	dir := filepath.Join(m.paths.AuthDir(), "seats")
	if err := config.EnsureDir(dir, 0o700); err != nil {
		return seat.Minted{}, err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.creds", r.Name, c.Identity.UID))
	if err := broker.WriteCreds(path, c); err != nil {
		return seat.Minted{}, err
	}
	return seat.Minted{Principal: p, UID: c.Identity.UID, Creds: path}, nil
}

// ManagerFile is where the mesh-hosted manager keeps its instance id.
func ManagerFile(p config.Paths) string { return filepath.Join(p.StoreDir, "manager.id") }
