package issue

import (
	"context"
	"path/filepath"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

// MintPerson mints the credential of a person joining the mesh from a
// terminal (`cotal join`) on the running mesh nc: owner local, the role
// given, joined to channels at connect and allowed to read and post on
// every channel. It is written under the store's creds folder, whose path
// it returns.
func MintPerson(ctx context.Context, p config.Paths, nc *nats.Conn, name, role string, channels []string) (string, error) {
	if channels == nil {
		channels = []string{}
	}
	id := broker.Identity{
		Space: p.Space, Principal: wire.Principal{Owner: "local", Actor: name}, Role: role,
		Subscribe: channels, AllowSubscribe: []string{">"}, AllowPublish: []string{">"},
	}
	c, _, err := Mint(ctx, p, id, nc)
	if err != nil {
		return "", err
	}
	if err := config.EnsureDir(p.CredsDir(), 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(p.CredsDir(), name+".creds")
	return path, broker.WriteCreds(path, c)
}
