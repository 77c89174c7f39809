package broker

import (
	"fmt"
	"os"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Creds is one minted user credential.
type Creds struct {
	Identity Identity
	UserKey  string // the JWT's subject: what a revocation names
	JWT      string
	Seed     []byte
	File     []byte // the decorated .creds file contents
}

// Mint issues a user JWT for id, signed with the account signing key. The
// JWT's name is the principal's dot-form and its tags carry the lifecycle
// uid, profile, role and ACL lists, so the holder learns its identity from
// the creds file alone.
func (a *Authority) Mint(id Identity) (Creds, error) {
	if id.Space == "" {
		id.Space = a.paths.Space
	}
	if id.Space != a.paths.Space {
		return Creds{}, fmt.Errorf("identity is for space %q, this authority signs for %q", id.Space, a.paths.Space)
	}
	if err := id.Normalize(); err != nil {
		return Creds{}, err
	}
	ukp, err := nkeys.CreateUser()
	if err != nil {
		return Creds{}, err
	}
	uc := jwt.NewUserClaims(pub(ukp))
	uc.Name = id.Principal.ID()
	uc.IssuerAccount = a.AccountKey()
	uc.Permissions = id.Permissions()
	if id.Profile != wire.ProfileOperator {
		uc.Limits.Subs = MaxSubsPerConn
	}
	uc.Tags.Add(wire.TagUID+id.UID, wire.TagProfile+string(id.Profile))
	if id.Role != "" {
		uc.Tags.Add(wire.TagRole + id.Role)
	}
	uc.Tags.Add(
		wire.EncodeListTag(wire.TagSpace, []string{id.Space}),
		wire.EncodeListTag(wire.TagSubscribe, id.Subscribe),
		wire.EncodeListTag(wire.TagAllowSub, id.AllowSubscribe),
		wire.EncodeListTag(wire.TagAllowPub, id.AllowPublish),
	)
	ujwt, err := uc.Encode(a.signer)
	if err != nil {
		return Creds{}, fmt.Errorf("signing credential for %s: %w", id.Principal, err)
	}
	seed, err := ukp.Seed()
	if err != nil {
		return Creds{}, err
	}
	file, err := jwt.FormatUserConfig(ujwt, seed)
	if err != nil {
		return Creds{}, err
	}
	return Creds{Identity: id, UserKey: pub(ukp), JWT: ujwt, Seed: seed, File: file}, nil
}

// WriteCreds writes a creds file 0600, refusing to follow a symlink into
// someone else's file by writing through a temp file and a rename.
func WriteCreds(path string, c Creds) error {
	if err := config.WriteFileAtomic(path, c.File, 0o600); err != nil {
		return fmt.Errorf("writing creds %s: %w", path, err)
	}
	return nil
}

// ReadCredsIdentity reads the identity a creds file was minted for, without
// verifying the signature (the broker does that on connect).
func ReadCredsIdentity(path string) (Identity, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Identity{}, err
	}
	return IdentityFromCreds(b)
}

// IdentityFromCreds decodes the identity carried by a creds file's JWT.
func IdentityFromCreds(b []byte) (Identity, error) {
	info, err := wire.ParseCreds(b)
	if err != nil {
		return Identity{}, err
	}
	return Identity{
		Space: info.Space, Principal: info.Principal, UID: info.UID, Profile: info.Profile, Role: info.Role,
		Subscribe: info.Subscribe, AllowSubscribe: info.AllowSubscribe, AllowPublish: info.AllowPublish,
	}, nil
}
