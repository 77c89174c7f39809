package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
)

// Minted is what Mint did: the credential, where its creds file is, the
// earlier lifecycles it revoked and whether that was on a running mesh.
type Minted struct {
	Creds       broker.Creds
	Path        string // absolute
	Provisioned bool   // its inbox and role queue exist on the running mesh
	Running     bool   // the revocations took effect on a running mesh
	Earlier     []string
	Readable    bool // a seat could read Path: it is outside the store's protected folders
}

// RefusedError is a mint refused for what was asked: a mesh in open
// mode, an identity that does not normalize, a reserved name.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Mintable refuses to mint for a mesh that runs in open mode: it takes no
// credentials.
func Mintable(p config.Paths) error {
	if s, err := Probe(p); err == nil {
		if rec, err := s.Serving(); err == nil && rec.Mode == config.ModeOpen {
			return &RefusedError{fmt.Errorf("mesh %s runs in open mode: it takes no credentials (restart it without --open to use them)", p.Space)}
		}
	}
	return nil
}

// Mint normalizes id (from names the agent file it was read from, ""
// for none) and issues it from p's authority, revoking its earlier
// credentials, and writes its creds file to out (default the store's
// auth/creds/<name>.creds). Mintable says first whether p takes
// credentials at all.
func Mint(ctx context.Context, p config.Paths, id broker.Identity, from, out string) (Minted, error) {
	if err := id.Normalize(); err != nil {
		if from != "" {
			err = fmt.Errorf("%s: %w", from, err)
		}
		return Minted{}, &RefusedError{err}
	}
	name := id.Principal.Actor
	nc, err := ConnectIfRunning(p, "cotal mint")
	if err != nil {
		return Minted{}, fmt.Errorf("%w (minting revokes the earlier credentials of %s on it)", err, name)
	}
	if nc != nil {
		defer nc.Close()
	}
	earlier, err := issue.Lifecycles(p, id.Principal)
	if err != nil {
		return Minted{}, err
	}
	c, provisioned, err := issue.Mint(ctx, p, id, nc)
	if errors.Is(err, issue.ErrReservedName) {
		return Minted{}, &RefusedError{err}
	}
	if err != nil {
		return Minted{}, err
	}
	if out == "" {
		out = filepath.Join(p.CredsDir(), name+".creds")
		if err := config.EnsureDir(p.CredsDir(), 0o700); err != nil {
			return Minted{}, err
		}
	}
	if err := broker.WriteCreds(out, c); err != nil {
		return Minted{}, err
	}
	abs, _ := filepath.Abs(out)
	return Minted{Creds: c, Path: abs, Provisioned: provisioned, Running: nc != nil, Earlier: earlier, Readable: !SeatsCannotRead(p, abs)}, nil
}
