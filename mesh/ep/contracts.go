package ep

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// ErrContractCorrupt is returned when a stored artifact does not hash to the digest it is stored under; it is never used.
var ErrContractCorrupt = errors.New("contract artifact does not match its digest")

// ContractStore is the space's create-only artifact store on EPC_: one message per epc.<hex>, verified on every read.
type ContractStore struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	space string
}

// NewContractStore opens the store of space over nc.
func NewContractStore(nc *nats.Conn, space string) (*ContractStore, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	return &ContractStore{nc: nc, js: js, space: space}, nil
}

// Put stores a JSON document create-only under its digest and returns the digest. Storing what is already there is a no-op; the stored copy is verified, so a corrupt incumbent is reported, never trusted.
func (c *ContractStore) Put(ctx context.Context, doc []byte) (string, error) {
	canon, err := Canonical(doc)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrContractInvalid, err)
	}
	d := rawDigest(canon)
	subj, err := ContractSubject(c.space, d)
	if err != nil {
		return "", err
	}
	if _, err := createOnly(ctx, c.js, subj, canon); err != nil {
		if !errors.Is(err, ErrExists) {
			return "", err
		}
		if _, err := c.Get(ctx, d); err != nil {
			return "", err
		}
	}
	return d, nil
}

// Get fetches the artifact stored under digest and verifies that its RFC 8785 form hashes to it.
func (c *ContractStore) Get(ctx context.Context, digest string) ([]byte, error) {
	subj, err := ContractSubject(c.space, digest)
	if err != nil {
		return nil, err
	}
	data, _, err := lastOnSubject(ctx, c.nc, wire.EPCStream(c.space), subj)
	if err != nil {
		return nil, err
	}
	got, err := Digest(data)
	if err != nil || got != normDigest(digest) {
		return nil, fmt.Errorf("%w: epc.%s holds a document hashing to %s", ErrContractCorrupt, digest, got)
	}
	return data, nil
}

func normDigest(d string) string {
	h, err := digestHex(d)
	if err != nil {
		return d
	}
	return digestPrefix + h
}
