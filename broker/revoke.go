package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/cotal-go/cotal/config"
)

// Revocation ends one minted credential. The account JWT lists its user key
// with At, and the server refuses every JWT of that key issued at or
// before At; applying that account JWT to a running server closes the
// connections that hold one.
type Revocation struct {
	UserKey   string    `json:"userKey"`
	Principal string    `json:"principal"` // dot-form: whose lifecycle ended
	UID       string    `json:"lifecycleUid"`
	At        time.Time `json:"at"`
}

type revocationFile struct {
	Revoked []Revocation `json:"revoked"`
}

// ErrNotApplied is returned by Revoke when the revocation was recorded but
// the running mesh did not apply it; the mesh's next start will.
var ErrNotApplied = errors.New("revocation recorded, but the running mesh did not apply it (its next start will)")

// claimsUpdateSubject is where a system-account client sends an account
// JWT for the server to apply (nats-server's account claims update).
const claimsUpdateSubject = "$SYS.REQ.ACCOUNT.%s.CLAIMS.UPDATE"

// RevocationsFile is where a space's revocations are kept, 0600 beside its
// keys. Every account JWT the authority issues carries all of them.
func RevocationsFile(p config.Paths) string { return filepath.Join(p.AuthDir(), "revocations.json") }

func revocationsLock(p config.Paths) string { return filepath.Join(p.AuthDir(), "revocations.lock") }

// ReadRevocations reads the space's revocations; none when it has none.
func ReadRevocations(p config.Paths) ([]Revocation, error) {
	b, err := os.ReadFile(RevocationsFile(p))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f revocationFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s is not valid: %w", RevocationsFile(p), err)
	}
	return f.Revoked, nil
}

// Revoke adds rs to the space's revocations on disk and re-issues the
// account JWT with all of them. apply, when not nil, gets that JWT while
// the list is still locked, so two processes revoking at once reach a
// running server in the order they wrote. The revocations stay recorded
// when apply fails: the next start of the mesh applies them.
func (a *Authority) Revoke(rs []Revocation, apply func(accountJWT string) error) error {
	for _, r := range rs {
		if !nkeys.IsValidPublicUserKey(r.UserKey) {
			return fmt.Errorf("revoking %s %s: %q is not a user key", r.Principal, r.UID, r.UserKey)
		}
	}
	unlock, err := lockExclusive(revocationsLock(a.paths))
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := ReadRevocations(a.paths)
	if err != nil {
		return err
	}
	have := make(map[string]bool, len(cur))
	for _, r := range cur {
		have[r.UserKey] = true
	}
	n := len(cur)
	for _, r := range rs {
		if have[r.UserKey] {
			continue
		}
		have[r.UserKey] = true
		if r.At.IsZero() {
			r.At = time.Now()
		}
		r.At = r.At.UTC()
		cur = append(cur, r)
	}
	if len(cur) > n {
		b, _ := json.MarshalIndent(revocationFile{Revoked: cur}, "", "  ")
		if err := config.WriteFileAtomic(RevocationsFile(a.paths), b, 0o600); err != nil {
			return fmt.Errorf("recording revocations: %w", err)
		}
	}
	a.mu.Lock()
	a.revocations = cur
	err = a.issue()
	ajwt := a.acctJWT
	a.mu.Unlock()
	if err != nil {
		return fmt.Errorf("issuing the account JWT: %w", err)
	}
	if apply == nil {
		return nil
	}
	if err := apply(ajwt); err != nil {
		return fmt.Errorf("%w: %w", ErrNotApplied, err)
	}
	return nil
}

// Revocations lists the revocations the account JWT carries.
func (a *Authority) Revocations() []Revocation {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Revocation(nil), a.revocations...)
}

// ConnectSystem connects as a user of the system account, minted in memory
// for this one connection: only a holder of the space's keys can. url is
// the server's client URL, ignored with nats.InProcessServer among opts.
func (a *Authority) ConnectSystem(url string, opts ...nats.Option) (*nats.Conn, error) {
	ukp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	uc := jwt.NewUserClaims(pub(ukp))
	uc.Name = "cotal_system"
	ujwt, err := uc.Encode(a.sys)
	if err != nil {
		return nil, err
	}
	seed, err := ukp.Seed()
	if err != nil {
		return nil, err
	}
	base := []nats.Option{nats.Name("cotal-system"), nats.UserJWTAndSeed(ujwt, string(seed)), nats.MaxReconnects(0)}
	return nats.Connect(url, append(base, opts...)...)
}

// PushAccount sends an account JWT to the server sys (a system-account
// connection) is connected to, and returns once the server applied it: it
// checked the JWT against the trusted operator, refuses revoked
// credentials from then on and has closed the connections holding one.
func PushAccount(ctx context.Context, sys *nats.Conn, accountJWT string) error {
	ac, err := jwt.DecodeAccountClaims(accountJWT)
	if err != nil {
		return err
	}
	msg, err := sys.RequestWithContext(ctx, fmt.Sprintf(claimsUpdateSubject, ac.Subject), []byte(accountJWT))
	if err != nil {
		return fmt.Errorf("sending the account update: %w", err)
	}
	var resp server.ServerAPIClaimUpdateResponse
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("the server's answer to the account update is not valid: %w", err)
	}
	if resp.Error != nil {
		return fmt.Errorf("the server refused the account update: %s", resp.Error.Description)
	}
	return nil
}

// lockExclusive waits for an exclusive flock on path.
func lockExclusive(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// OnRevoked calls fn, on one goroutine, with each revocation in the
// account updates the server is sent from now on, once per user key, and
// keeps the memory resolver in step with those updates so that nothing
// re-reading it brings back an older account JWT. stop ends it.
func (b *Broker) OnRevoked(fn func(Revocation)) (stop func(), err error) {
	if b.auth == nil {
		return func() {}, nil
	}
	nc, err := b.ConnectSystem()
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	for _, r := range b.auth.Revocations() {
		seen[r.UserKey] = true
	}
	opKey, acctKey := pub(b.auth.operator), b.auth.AccountKey()
	_, err = nc.Subscribe(fmt.Sprintf(claimsUpdateSubject, acctKey), func(m *nats.Msg) {
		ac, err := jwt.DecodeAccountClaims(string(m.Data))
		if err != nil || ac.Issuer != opKey || ac.Subject != acctKey {
			return // the server refuses it too
		}
		if b.resolver != nil {
			_ = b.resolver.Store(acctKey, string(m.Data))
		}
		mu.Lock()
		defer mu.Unlock()
		var fresh []string
		for k := range ac.Revocations {
			if k != jwt.All && !seen[k] {
				fresh = append(fresh, k)
			}
		}
		if len(fresh) == 0 {
			return
		}
		known, err := ReadRevocations(b.opts.Paths)
		if err != nil {
			return
		}
		byKey := make(map[string]Revocation, len(known))
		for _, r := range known {
			byKey[r.UserKey] = r
		}
		for _, k := range fresh {
			seen[k] = true
			if r, ok := byKey[k]; ok {
				fn(r)
			}
		}
	})
	if err == nil {
		err = nc.Flush()
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	return nc.Close, nil
}

// ConnectSystem opens an in-process connection in the system account, or
// on an external cluster one to its servers (which trust the space's
// system account once configured from `cotal broker config`).
func (b *Broker) ConnectSystem() (*nats.Conn, error) {
	if b.auth == nil {
		return nil, errors.New("an open mesh has no system account")
	}
	if b.srv == nil {
		return b.auth.ConnectSystem(b.url, nats.Timeout(5*time.Second), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))
	}
	return b.auth.ConnectSystem("", nats.InProcessServer(b.srv))
}
