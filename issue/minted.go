package issue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

// mintedRecord is the registry file of one credential the space minted,
// one per lifecycle under MintedDir. The identity's fields stay at the top
// level, as files written before revocation existed have them.
type mintedRecord struct {
	broker.Identity
	UserKey  string    `json:"userKey,omitempty"` // the JWT's subject: what a revocation names
	MintedAt time.Time `json:"mintedAt,omitzero"`
	Seat     *seatHost `json:"seat,omitempty"` // set on a seat's credential
}

// seatHost is the process whose manager runs a seat. A seat runs in that
// process's pty, so it cannot outlive it.
type seatHost struct {
	PID   int    `json:"pid"`
	Start string `json:"start,omitempty"` // the process's start time, where the OS tells it, against pid reuse
}

type mintedFile struct {
	path string
	rec  mintedRecord
}

// Mint issues a credential for id from the space's authority (creating the
// authority's keys on first use) and records it so the next `up`
// provisions it. A name CheckName refuses is ErrReservedName. Every earlier credential of the same principal is
// revoked: the broker refuses it and, on a running mesh, closes its
// connections before Mint returns. When nc is a connection to the running
// mesh the new identity's durables are provisioned now; Mint returns
// whether that happened.
func Mint(ctx context.Context, p config.Paths, id broker.Identity, nc *nats.Conn) (broker.Creds, bool, error) {
	return mint(ctx, p, id, nc, nil)
}

func mint(ctx context.Context, p config.Paths, id broker.Identity, nc *nats.Conn, host *seatHost) (broker.Creds, bool, error) {
	if err := CheckName(p, id.Principal, id.Profile); err != nil {
		return broker.Creds{}, false, err
	}
	auth, err := broker.LoadAuthority(p)
	if err != nil {
		return broker.Creds{}, false, err
	}
	c, err := auth.Mint(id)
	if err != nil {
		return broker.Creds{}, false, err
	}
	// The new record is written first, so the name never looks free
	// while its earlier credentials are ended.
	path, err := recordMinted(p, mintedRecord{Identity: c.Identity, UserKey: c.UserKey, MintedAt: time.Now().UTC(), Seat: host})
	if err != nil {
		return broker.Creds{}, false, err
	}
	older, err := liveMinted(p, func(r mintedRecord) bool {
		return r.Principal == c.Identity.Principal && r.UID != c.Identity.UID
	})
	if err == nil {
		err = end(ctx, p, auth, older, nc)
	}
	if err != nil {
		_ = os.Remove(path)
		return broker.Creds{}, false, fmt.Errorf("ending the earlier credentials of %s: %w", c.Identity.Principal, err)
	}
	if nc == nil {
		return c, false, nil
	}
	if err := broker.ProvisionIdentity(ctx, nc, c.Identity); err != nil {
		return c, false, fmt.Errorf("provisioning %s on the running mesh: %w", c.Identity.Principal, err)
	}
	return c, true, nil
}

// Retire revokes the credential of one lifecycle (a seat that stopped) and
// ends that lifecycle on the running mesh when nc reaches it. A lifecycle
// the registry does not hold, or holds revoked already, is left as it is.
func Retire(ctx context.Context, p config.Paths, principal wire.Principal, uid string, nc *nats.Conn) error {
	recs, err := liveMinted(p, func(r mintedRecord) bool { return r.Principal == principal && r.UID == uid })
	if err != nil || len(recs) == 0 {
		return err
	}
	auth, err := broker.LoadAuthority(p)
	if err != nil {
		return err
	}
	return end(ctx, p, auth, recs, nc)
}

// Held reports whether the space holds an unrevoked credential of
// principal, which keeps its name from being handed out again. An
// unreadable registry holds nothing: it must not block every spawn.
func Held(p config.Paths, principal wire.Principal) bool {
	recs, err := liveMinted(p, func(r mintedRecord) bool { return r.Principal == principal })
	return err == nil && len(recs) > 0
}

// Lifecycles lists the lifecycle uids of principal's unrevoked
// credentials, oldest first: what minting it again revokes.
func Lifecycles(p config.Paths, principal wire.Principal) ([]string, error) {
	recs, err := liveMinted(p, func(r mintedRecord) bool { return r.Principal == principal })
	uids := make([]string, 0, len(recs))
	for _, f := range recs {
		uids = append(uids, f.rec.UID)
	}
	return uids, err
}

// end revokes the credentials of recs. With nc (a connection to the
// running mesh) the server applies that before end returns, closing their
// connections, and their ACL rows are deleted; without, the revocations
// wait in the revocations file for the next start, which applies them and
// deletes the rows. A record written before user keys were recorded can
// only lose its ACL row and registry file: the broker cannot name it.
func end(ctx context.Context, p config.Paths, auth *broker.Authority, recs []mintedFile, nc *nats.Conn) error {
	if len(recs) == 0 {
		return nil
	}
	var rs []broker.Revocation
	for _, f := range recs {
		if f.rec.UserKey != "" {
			rs = append(rs, broker.Revocation{UserKey: f.rec.UserKey, Principal: f.rec.Principal.ID(), UID: f.rec.UID})
		}
	}
	var apply func(string) error
	if nc != nil {
		apply = func(ajwt string) error { return PushAccount(ctx, auth, nc, ajwt) }
	}
	var err error
	if len(rs) > 0 {
		err = auth.Revoke(rs, apply)
	}
	if err != nil && !errors.Is(err, broker.ErrNotApplied) {
		return err // nothing was recorded: the records stay live
	}
	for _, f := range recs {
		_ = os.Remove(f.path)
	}
	if err != nil {
		return err
	}
	if nc == nil {
		return nil
	}
	for _, f := range recs {
		if err := DeleteACLRow(ctx, nc, p.Space, f.rec.Principal, f.rec.UID); err != nil {
			return err
		}
	}
	return nil
}

// PushAccount puts an account JWT in force on the mesh nc is connected to,
// through a system-account connection made the same way nc was (in
// process, or to the URL nc uses).
func PushAccount(ctx context.Context, auth *broker.Authority, nc *nats.Conn, ajwt string) error {
	var sys *nats.Conn
	var err error
	if ip := nc.Opts.InProcessServer; ip != nil {
		sys, err = auth.ConnectSystem("", nats.InProcessServer(ip))
	} else if url := nc.ConnectedUrl(); url != "" {
		opts := []nats.Option{nats.Timeout(5 * time.Second)}
		if nc.Opts.TLSConfig != nil { // verified as nc's server was (a pin or a CA)
			opts = append(opts, nats.Secure(nc.Opts.TLSConfig))
		}
		sys, err = auth.ConnectSystem(url, opts...)
	} else {
		err = errors.New("the connection to the mesh is down")
	}
	if err != nil {
		return fmt.Errorf("reaching the mesh's system account: %w", err)
	}
	defer sys.Close()
	return broker.PushAccount(ctx, sys, ajwt)
}

// DeleteACLRow deletes one lifecycle's read ACL row, if it has one.
// It runs right after a revocation, so a JetStream API gap of another
// account update is waited out (broker.RetryNoResponders).
func DeleteACLRow(ctx context.Context, nc *nats.Conn, space string, principal wire.Principal, uid string) error {
	return broker.RetryNoResponders(ctx, func() error { return deleteACLRow(ctx, nc, space, principal, uid) })
}

func deleteACLRow(ctx context.Context, nc *nats.Conn, space string, principal wire.Principal, uid string) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	kv, err := js.KeyValue(ctx, wire.ACLBucket(space))
	if err != nil {
		return fmt.Errorf("ACL bucket of %s: %w", space, err)
	}
	key := wire.ACLKey(principal, uid)
	if _, err := kv.Get(ctx, key); errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	if err := kv.Delete(ctx, key); err != nil {
		return fmt.Errorf("deleting the read ACL of %s %s: %w", principal, uid, err)
	}
	return nil
}

func recordMinted(p config.Paths, rec mintedRecord) (string, error) {
	if err := config.EnsureDir(MintedDir(p), 0o700); err != nil {
		return "", err
	}
	b, _ := json.MarshalIndent(rec, "", "  ")
	path := filepath.Join(MintedDir(p), rec.Principal.ID()+"."+rec.UID+".json")
	return path, config.WriteFileAtomic(path, b, 0o600)
}

// liveMinted lists the registry's unrevoked records that keep accepts,
// oldest first. A record whose key the revocations name is revoked even
// if a crash left its file behind; such files are removed on the way.
func liveMinted(p config.Paths, keep func(mintedRecord) bool) ([]mintedFile, error) {
	ents, err := os.ReadDir(MintedDir(p))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	revs, err := broker.ReadRevocations(p)
	if err != nil {
		return nil, err
	}
	revoked := make(map[string]bool, len(revs))
	for _, r := range revs {
		revoked[r.UserKey] = true
	}
	var out []mintedFile
	for _, de := range ents {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		path := filepath.Join(MintedDir(p), de.Name())
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // ended meanwhile
		}
		if err != nil {
			return nil, err
		}
		var rec mintedRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("%s is not valid: %w", path, err)
		}
		if rec.UserKey != "" && revoked[rec.UserKey] {
			_ = os.Remove(path)
			continue
		}
		rec.Space = p.Space
		if keep(rec) {
			out = append(out, mintedFile{path: path, rec: rec})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].rec.MintedAt.Before(out[j].rec.MintedAt) })
	return out, nil
}

// ProvisionMinted provisions every unrevoked recorded identity, oldest
// first, so a principal's registry row names its newest lifecycle. It is
// idempotent: existing durables are left as they are.
func ProvisionMinted(ctx context.Context, nc *nats.Conn, p config.Paths) error {
	recs, err := liveMinted(p, func(mintedRecord) bool { return true })
	if err != nil {
		return err
	}
	for _, f := range recs {
		if err := broker.ProvisionIdentity(ctx, nc, f.rec.Identity); err != nil {
			return fmt.Errorf("provisioning %s: %w", f.rec.Principal, err)
		}
	}
	return nil
}
