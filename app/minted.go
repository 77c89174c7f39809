package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
)

// Mint issues a credential for id from the space's authority (creating the
// authority's keys on first use), records the identity so the next `up`
// provisions it, and, when nc is a connection to the running mesh,
// provisions its durables now. It returns whether provisioning happened.
func Mint(ctx context.Context, p config.Paths, id broker.Identity, nc *nats.Conn) (broker.Creds, bool, error) {
	auth, err := broker.LoadAuthority(p)
	if err != nil {
		return broker.Creds{}, false, err
	}
	c, err := auth.Mint(id)
	if err != nil {
		return broker.Creds{}, false, err
	}
	if err := recordMinted(p, c.Identity); err != nil {
		return broker.Creds{}, false, err
	}
	if nc == nil {
		return c, false, nil
	}
	if err := broker.ProvisionIdentity(ctx, nc, c.Identity); err != nil {
		return c, false, fmt.Errorf("provisioning %s on the running mesh: %w", c.Identity.Principal, err)
	}
	return c, true, nil
}

func recordMinted(p config.Paths, id broker.Identity) error {
	if err := config.EnsureDir(MintedDir(p), 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(id, "", "  ")
	name := id.Principal.ID() + "." + id.UID + ".json"
	return config.WriteFileAtomic(filepath.Join(MintedDir(p), name), b, 0o600)
}

// ProvisionMinted provisions every recorded identity. It is idempotent:
// existing durables are left as they are.
func ProvisionMinted(ctx context.Context, nc *nats.Conn, p config.Paths) error {
	ents, err := os.ReadDir(MintedDir(p))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, de := range ents {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		path := filepath.Join(MintedDir(p), de.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var id broker.Identity
		if err := json.Unmarshal(b, &id); err != nil {
			return fmt.Errorf("%s is not valid: %w", path, err)
		}
		id.Space = p.Space
		if err := broker.ProvisionIdentity(ctx, nc, id); err != nil {
			return fmt.Errorf("provisioning %s: %w", id.Principal, err)
		}
	}
	return nil
}
