package broker

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/cotal-go/cotal/config"
)

// keyFile is the on-disk form of a space's signing keys. It lives 0600 in
// the store's auth dir and is the only place the seeds exist.
type keyFile struct {
	Operator string `json:"operator"`
	System   string `json:"system"`
	Account  string `json:"account"`
	Signer   string `json:"signer"`
}

// Authority holds a space's operator, system account, space account and
// the account signing key that user credentials are minted with. Only the
// mesh process and `cotal mint` load it; a seat never sees it.
type Authority struct {
	paths                       config.Paths
	operator, sys, acct, signer nkeys.KeyPair

	// mu guards what issue writes: Revoke re-issues while others read.
	mu                           sync.Mutex
	revocations                  []Revocation
	operatorJWT, sysJWT, acctJWT string
	operatorClaims               *jwt.OperatorClaims
}

// KeysFile is where the authority's seeds are kept.
func KeysFile(p config.Paths) string { return filepath.Join(p.AuthDir(), "keys.json") }

// LoadAuthority reads the space's keys, creating them on first use, and
// issues fresh operator and account JWTs from them, the account JWT
// carrying every revocation recorded in RevocationsFile.
func LoadAuthority(p config.Paths) (*Authority, error) {
	if err := config.EnsureDir(p.AuthDir(), 0o700); err != nil {
		return nil, err
	}
	kf, err := readKeys(KeysFile(p))
	if errors.Is(err, fs.ErrNotExist) {
		kf, err = newKeys()
		if err == nil {
			b, _ := json.MarshalIndent(kf, "", "  ")
			err = config.WriteFileAtomic(KeysFile(p), b, 0o600)
		}
	}
	if err != nil {
		return nil, err
	}
	a := &Authority{paths: p}
	for _, k := range []struct {
		seed string
		dst  *nkeys.KeyPair
	}{{kf.Operator, &a.operator}, {kf.System, &a.sys}, {kf.Account, &a.acct}, {kf.Signer, &a.signer}} {
		kp, err := nkeys.FromSeed([]byte(k.seed))
		if err != nil {
			return nil, fmt.Errorf("%s holds a bad key: %w", KeysFile(p), err)
		}
		*k.dst = kp
	}
	if a.revocations, err = ReadRevocations(p); err != nil {
		return nil, err
	}
	if err := a.issue(); err != nil {
		return nil, fmt.Errorf("issuing account JWTs: %w", err)
	}
	return a, nil
}

func readKeys(path string) (keyFile, error) {
	var kf keyFile
	b, err := os.ReadFile(path)
	if err != nil {
		return kf, err
	}
	if err := json.Unmarshal(b, &kf); err != nil {
		return kf, fmt.Errorf("%s is not valid: %w", path, err)
	}
	return kf, nil
}

func newKeys() (keyFile, error) {
	var kf keyFile
	for _, k := range []struct {
		make func() (nkeys.KeyPair, error)
		dst  *string
	}{{nkeys.CreateOperator, &kf.Operator}, {nkeys.CreateAccount, &kf.System}, {nkeys.CreateAccount, &kf.Account}, {nkeys.CreateAccount, &kf.Signer}} {
		kp, err := k.make()
		if err != nil {
			return kf, err
		}
		seed, err := kp.Seed()
		if err != nil {
			return kf, err
		}
		*k.dst = string(seed)
	}
	return kf, nil
}

func pub(kp nkeys.KeyPair) string {
	s, _ := kp.PublicKey()
	return s
}

// issue signs the operator, system account and space account claims. A
// claim whose content (signer included) is what was signed last time keeps
// the JWT signed then, so `cotal broker config` prints the same block until
// something in it changes (a JWT otherwise differs by its issue time alone).
// The caller holds mu (or owns a not yet shared Authority).
func (a *Authority) issue() error {
	prev := readIssued(a.paths)
	next := issuedFile{}
	sign := func(name string, c jwt.Claims, digestOf any, kp nkeys.KeyPair) (string, error) {
		b, err := json.Marshal(digestOf)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(append([]byte(pub(kp)+"\n"), b...))
		digest := hex.EncodeToString(sum[:])
		if old, ok := prev[name]; ok && old.Digest == digest && signedBy(old.JWT, pub(kp)) {
			next[name] = old
			return old.JWT, nil
		}
		tok, err := c.Encode(kp)
		if err != nil {
			return "", err
		}
		next[name] = issuedJWT{Digest: digest, JWT: tok}
		return tok, nil
	}
	oc := jwt.NewOperatorClaims(pub(a.operator))
	oc.Name = "cotal"
	oc.SystemAccount = pub(a.sys)
	ojwt, err := sign("operator", oc, oc, a.operator)
	if err != nil {
		return err
	}
	sc := jwt.NewAccountClaims(pub(a.sys))
	sc.Name = "SYS"
	sjwt, err := sign("system", sc, sc, a.operator)
	if err != nil {
		return err
	}
	ac := jwt.NewAccountClaims(pub(a.acct))
	ac.Name = a.paths.Space
	ac.SigningKeys.Add(pub(a.signer))
	for _, r := range a.revocations {
		ac.RevokeAt(r.UserKey, r.At)
	}
	accountLimits(ac)
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{
		MemoryStorage: jwt.NoLimit, DiskStorage: jwt.NoLimit,
		Streams: jwt.NoLimit, Consumer: jwt.NoLimit, MaxAckPending: jwt.NoLimit,
	}
	ajwt, err := sign("account", ac, ac, a.operator)
	if err != nil {
		return err
	}
	if reused := len(prev) == len(next) && prev["operator"] == next["operator"] && prev["system"] == next["system"] && prev["account"] == next["account"]; !reused {
		// The JWTs are public, so a failed write costs only stability.
		b, _ := json.MarshalIndent(next, "", "  ")
		_ = config.WriteFileAtomic(issuedPath(a.paths), b, 0o600)
	}
	// Decoding gives the operator claims as the token carries them (issue
	// time and ID), the form a server checks.
	if oc, err = jwt.DecodeOperatorClaims(ojwt); err != nil {
		return fmt.Errorf("reading the operator JWT back: %w", err)
	}
	a.operatorJWT, a.sysJWT, a.acctJWT, a.operatorClaims = ojwt, sjwt, ajwt, oc
	return nil
}

// issuedJWT is one signed claim and the digest of the content it was
// signed from.
type issuedJWT struct {
	Digest string `json:"digest"`
	JWT    string `json:"jwt"`
}

// signedBy says the token's signature holds and its issuer is key.
func signedBy(tok, key string) bool {
	c, err := jwt.DecodeGeneric(tok)
	return err == nil && c.Issuer == key
}

type issuedFile map[string]issuedJWT

func issuedPath(p config.Paths) string { return filepath.Join(p.AuthDir(), "issued.json") }

// readIssued is the last signed set; anything unreadable is no set, so
// everything is signed afresh.
func readIssued(p config.Paths) issuedFile {
	b, err := os.ReadFile(issuedPath(p))
	if err != nil {
		return nil
	}
	var f issuedFile
	if json.Unmarshal(b, &f) != nil {
		return nil
	}
	return f
}

// AccountKey is the public key of the space's account.
func (a *Authority) AccountKey() string { return pub(a.acct) }

// SystemKey is the public key of the system account.
func (a *Authority) SystemKey() string { return pub(a.sys) }

// Trust returns what a nats-server needs to trust this authority: the
// operator claims, a memory resolver preloaded with the system and space
// accounts, and the system account key.
func (a *Authority) Trust() ([]*jwt.OperatorClaims, *server.MemAccResolver, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	res := &server.MemAccResolver{}
	_ = res.Store(a.SystemKey(), a.sysJWT)
	_ = res.Store(a.AccountKey(), a.acctJWT)
	return []*jwt.OperatorClaims{a.operatorClaims}, res, a.SystemKey()
}
