package attach

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Bounds of a grant (spec §12).
const (
	GrantVersion    = 1
	DefaultWindow   = 64
	MaxWindow       = 1024
	MaxGrantTTL     = 24 * time.Hour
	DefaultGrantTTL = MaxGrantTTL
	MaxGrantBytes   = 16 * 1024
	MinSessionIDLen = 22

	maxSafeInt = 1<<53 - 1 // the largest integer every JSON reader holds exactly
)

// Holder is who may redeem a grant and use its session.
type Holder struct {
	ID           string `json:"id"` // owner.actor
	LifecycleUID string `json:"lifecycleUid"`
	ProcessEpoch uint64 `json:"processEpoch"`
}

// Caller is the holder as the subject triple it is bound to.
func (h Holder) Caller() (proto.Caller, error) {
	p, err := wire.ParsePrincipal(h.ID)
	if err != nil {
		return proto.Caller{}, err
	}
	c := proto.Caller{Owner: p.Owner, Actor: p.Actor, UID: h.LifecycleUID}
	return c, c.Valid()
}

// HolderOf is the holder for an ep caller at its process epoch.
func HolderOf(c proto.Caller, processEpoch uint64) Holder {
	return Holder{ID: c.ID(), LifecycleUID: c.UID, ProcessEpoch: processEpoch}
}

// Serving is the manager instance and epoch a session is pinned to.
type Serving struct {
	InstanceID string `json:"instanceId"`
	Epoch      uint64 `json:"epoch"`
}

// Issuer names the key that signed a grant.
type Issuer struct {
	KeyID string `json:"keyId"`
}

// Grant is a one-use, holder-bound, signed offer of one attach session
// (spec §12). Times are unix milliseconds.
type Grant struct {
	V         int      `json:"v"`
	SessionID string   `json:"sessionId"`
	Space     string   `json:"space"`
	Endpoint  string   `json:"endpoint"`
	Subjects  Subjects `json:"subjects"`
	Holder    Holder   `json:"holder"`
	Serving   Serving  `json:"serving"`
	Window    int      `json:"window"`
	IAT       int64    `json:"iat"`
	NBF       *int64   `json:"nbf,omitempty"`
	EXP       int64    `json:"exp"`
	Nonce     string   `json:"nonce"`
	Issuer    Issuer   `json:"issuer"`
	Sig       string   `json:"sig"`
}

// Expires is when the grant, and a session redeemed from it, ends.
func (g Grant) Expires() time.Time { return time.UnixMilli(g.EXP) }

// Marshal is the grant's canonical JSON, the form the attach reply carries.
func (g Grant) Marshal() ([]byte, error) { return proto.Marshal(g) }

// Signer signs and verifies grants with one Ed25519 key. A manager makes a
// fresh one each start: a grant never outlives the epoch it names.
type Signer struct {
	key ed25519.PrivateKey
	pub ed25519.PublicKey
	id  string
}

// NewSigner makes a signer with a fresh key.
func NewSigner() *Signer {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err) // crypto/rand never fails since Go 1.24
	}
	return signerOf(key)
}

func signerOf(key ed25519.PrivateKey) *Signer {
	pub := key.Public().(ed25519.PublicKey)
	sum := sha256.Sum256(pub)
	return &Signer{key: key, pub: pub, id: "ed25519-" + base64.RawURLEncoding.EncodeToString(sum[:12])}
}

// KeyID names the signer's key in issuer.keyId.
func (s *Signer) KeyID() string { return s.id }

// GrantRequest is what Issue needs besides the key.
type GrantRequest struct {
	Space    string
	Endpoint string
	Holder   Holder
	Serving  Serving
	Window   int           // 0: DefaultWindow
	TTL      time.Duration // 0: DefaultGrantTTL; at most MaxGrantTTL
	Now      time.Time     // zero: time.Now
}

// Issue mints a grant with a fresh session id and nonce, signed over the
// RFC 8785 form of everything but sig.
func (s *Signer) Issue(req GrantRequest) (Grant, error) {
	if req.Window == 0 {
		req.Window = DefaultWindow
	}
	if req.TTL == 0 {
		req.TTL = DefaultGrantTTL
	}
	if req.Now.IsZero() {
		req.Now = time.Now()
	}
	if req.Window < 1 || req.Window > MaxWindow {
		return Grant{}, refuse(ErrInvalidGrant, "window %d is not in 1..%d", req.Window, MaxWindow)
	}
	if req.TTL < time.Millisecond || req.TTL > MaxGrantTTL {
		return Grant{}, refuse(ErrInvalidGrant, "grant lifetime %s is not in 1ms..%s", req.TTL, MaxGrantTTL)
	}
	tok, err := proto.EndpointToken(req.Endpoint)
	if err != nil {
		return Grant{}, err
	}
	if !proto.ValidID(req.Serving.InstanceID) {
		return Grant{}, refuse(ErrInvalidGrant, "serving instance id %q is not an id token", req.Serving.InstanceID)
	}
	caller, err := req.Holder.Caller()
	if err != nil {
		return Grant{}, err
	}
	if req.Holder.ProcessEpoch > maxSafeInt {
		return Grant{}, refuse(ErrInvalidGrant, "holder process epoch %d is beyond 2^53-1", req.Holder.ProcessEpoch)
	}
	g := Grant{
		V:         GrantVersion,
		SessionID: randomToken(32),
		Space:     req.Space,
		Endpoint:  tok,
		Holder:    req.Holder,
		Serving:   req.Serving,
		Window:    req.Window,
		IAT:       req.Now.UnixMilli(),
		EXP:       req.Now.Add(req.TTL).UnixMilli(),
		Nonce:     randomToken(18),
		Issuer:    Issuer{KeyID: s.id},
	}
	if g.Subjects, err = SessionSubjects(g.Space, g.Endpoint, g.SessionID, g.Serving.Epoch, caller); err != nil {
		return Grant{}, err
	}
	return s.sign(g)
}

// sign sets g.Sig over the canonical form of the rest of g.
func (s *Signer) sign(g Grant) (Grant, error) {
	signed, err := signingForm(g)
	if err != nil {
		return Grant{}, err
	}
	if len(signed) > MaxGrantBytes {
		return Grant{}, refuse(ErrInvalidGrant, "grant is %d bytes, over %d", len(signed), MaxGrantBytes)
	}
	g.Sig = base64.RawURLEncoding.EncodeToString(ed25519.Sign(s.key, signed))
	return g, nil
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// signingForm is the canonical JSON of g without sig.
func signingForm(g Grant) ([]byte, error) {
	raw, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	return withoutSig(raw)
}

// withoutSig is the canonical JSON of a grant object with its sig member
// removed: exactly what was signed, whatever member order or spacing the
// presented copy has.
func withoutSig(raw []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, refuse(ErrInvalidGrant, "grant is not a JSON object: %v", err)
	}
	delete(m, "sig")
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return proto.Canonical(b)
}

// The members each object of a grant has: required, then optional.
var (
	grantMembers    = []string{"v", "sessionId", "space", "endpoint", "subjects", "holder", "serving", "window", "iat", "exp", "nonce", "issuer", "sig"}
	grantOptional   = []string{"nbf"}
	subjectsMembers = []string{"in", "out"}
	holderMembers   = []string{"id", "lifecycleUid", "processEpoch"}
	servingMembers  = []string{"instanceId", "epoch"}
	issuerMembers   = []string{"keyId"}
)

// ParseGrant reads a grant as the attach reply carries it, refusing
// anything outside the closed schema, over MaxGrantBytes, or with names,
// bounds or subjects that do not hold together. It does not check the
// signature (only the issuing manager can: see Signer.Verify).
func ParseGrant(raw []byte) (Grant, error) {
	if len(raw) > MaxGrantBytes {
		return Grant{}, refuse(ErrInvalidGrant, "grant is %d bytes, over %d", len(raw), MaxGrantBytes)
	}
	if _, err := proto.Canonical(raw); err != nil { // duplicate members, bad text, huge numbers
		return Grant{}, refuse(ErrInvalidGrant, "grant: %v", err)
	}
	top, err := closed(raw, "grant", grantMembers, grantOptional)
	if err != nil {
		return Grant{}, err
	}
	for name, members := range map[string][]string{"subjects": subjectsMembers, "holder": holderMembers, "serving": servingMembers, "issuer": issuerMembers} {
		if _, err := closed(top[name], name, members, nil); err != nil {
			return Grant{}, err
		}
	}
	var g Grant
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return Grant{}, refuse(ErrInvalidGrant, "grant: %v", err)
	}
	if err := g.check(); err != nil {
		return Grant{}, err
	}
	return g, nil
}

// closed decodes one JSON object whose member names must be exactly the
// required ones plus any of the optional ones (case-sensitive).
func closed(raw json.RawMessage, what string, required, optional []string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, refuse(ErrInvalidGrant, "grant %s is not an object", what)
	}
	known := make(map[string]bool, len(required)+len(optional))
	for _, k := range required {
		if _, ok := m[k]; !ok {
			return nil, refuse(ErrInvalidGrant, "grant %s lacks %q", what, k)
		}
		known[k] = true
	}
	for _, k := range optional {
		known[k] = true
	}
	for k := range m {
		if !known[k] {
			return nil, refuse(ErrInvalidGrant, "grant %s carries the unknown member %q", what, k)
		}
	}
	return m, nil
}

// check refuses a grant whose fields break their grammar or bounds, or
// whose subjects are not the ones its other fields derive.
func (g Grant) check() error {
	switch {
	case g.V != GrantVersion:
		return refuse(ErrInvalidGrant, "grant version %d is not %d", g.V, GrantVersion)
	case !validSessionID(g.SessionID):
		return refuse(ErrInvalidGrant, "session id must be %d-64 characters of A-Z a-z 0-9 _ -", MinSessionIDLen)
	case g.Window < 1 || g.Window > MaxWindow:
		return refuse(ErrInvalidGrant, "window %d is not in 1..%d", g.Window, MaxWindow)
	case !proto.ValidID(g.Serving.InstanceID):
		return refuse(ErrInvalidGrant, "serving instance id %q is not an id token", g.Serving.InstanceID)
	case g.Serving.Epoch > maxSafeInt || g.Holder.ProcessEpoch > maxSafeInt:
		return refuse(ErrInvalidGrant, "an epoch is beyond 2^53-1")
	case !proto.ValidNonce(g.Nonce):
		return refuse(ErrInvalidGrant, "nonce must be 22-64 characters of A-Z a-z 0-9 _ -")
	case g.Issuer.KeyID == "" || len(g.Issuer.KeyID) > 64:
		return refuse(ErrInvalidGrant, "issuer key id must be 1-64 characters")
	case g.EXP <= g.IAT || time.Duration(g.EXP-g.IAT)*time.Millisecond > MaxGrantTTL:
		return refuse(ErrInvalidGrant, "grant lifetime iat %d .. exp %d is not within %s", g.IAT, g.EXP, MaxGrantTTL)
	case g.NBF != nil && (*g.NBF < g.IAT || *g.NBF >= g.EXP):
		return refuse(ErrInvalidGrant, "nbf %d is not within iat..exp", *g.NBF)
	}
	if _, err := base64.RawURLEncoding.DecodeString(g.Sig); err != nil || g.Sig == "" {
		return refuse(ErrInvalidGrant, "sig is not base64url")
	}
	caller, err := g.Holder.Caller()
	if err != nil {
		return refuse(ErrInvalidGrant, "grant holder: %v", err)
	}
	want, err := SessionSubjects(g.Space, g.Endpoint, g.SessionID, g.Serving.Epoch, caller)
	if err != nil {
		return refuse(ErrInvalidGrant, "grant: %v", err)
	}
	if g.Subjects != want {
		return refuse(ErrInvalidGrant, "grant subjects are not the ones its session, epoch and holder derive")
	}
	return nil
}

func validSessionID(s string) bool { return len(s) >= MinSessionIDLen && proto.ValidID(s) }

// Expect is what a presented grant must match at the serving manager.
type Expect struct {
	Space    string
	Endpoint string
	Serving  Serving
	Now      time.Time // zero: time.Now
}

// Verify parses raw, checks that it names this space, endpoint, instance
// and epoch, then its signature against this signer's key, then that now
// is within nbf..exp. The refusals are ep errors a handler can reply with:
// a grant from another epoch is expired ("the manager restarted;
// re-attach") before its signature is looked at, since a restarted
// manager signs with a new key; a forged one is permission-denied.
func (s *Signer) Verify(raw []byte, want Expect) (Grant, error) {
	g, err := ParseGrant(raw)
	if err != nil {
		return Grant{}, proto.Refuse(proto.CodeBadRequest, "%v", err)
	}
	wantTok, err := proto.EndpointToken(want.Endpoint)
	if err != nil {
		return Grant{}, proto.Refuse(proto.CodeBadRequest, "%v", err)
	}
	if g.Space != want.Space || g.Endpoint != wantTok {
		return Grant{}, proto.Refuse(proto.CodePermissionDenied, "the session grant is for %s on space %s, not %s on %s", g.Endpoint, g.Space, wantTok, want.Space)
	}
	if g.Serving.InstanceID != want.Serving.InstanceID {
		return Grant{}, proto.Refuse(proto.CodeFailedPrecondition, "the session grant is for manager instance %s, not %s", g.Serving.InstanceID, want.Serving.InstanceID)
	}
	if g.Serving.Epoch != want.Serving.Epoch {
		return Grant{}, proto.Refuse(proto.CodeExpired, "the session grant is from epoch %d and this manager serves epoch %d: the manager restarted; re-attach", g.Serving.Epoch, want.Serving.Epoch)
	}
	signed, err := withoutSig(raw)
	if err != nil {
		return Grant{}, proto.Refuse(proto.CodeBadRequest, "%v", err)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(g.Sig)
	if g.Issuer.KeyID != s.id || !ed25519.Verify(s.pub, signed, sig) {
		return Grant{}, proto.Refuse(proto.CodePermissionDenied, "the session grant's signature does not verify with this manager's key")
	}
	now := want.Now
	if now.IsZero() {
		now = time.Now()
	}
	ms := now.UnixMilli()
	if g.NBF != nil && ms < *g.NBF {
		return Grant{}, proto.Refuse(proto.CodeFailedPrecondition, "the session grant is not valid before %s", time.UnixMilli(*g.NBF).UTC().Format(time.RFC3339))
	}
	if ms >= g.EXP {
		return Grant{}, proto.Refuse(proto.CodeExpired, "the session grant expired at %s", g.Expires().UTC().Format(time.RFC3339))
	}
	return g, nil
}

// String never prints the signature or the session id: a grant is not
// logged.
func (g Grant) String() string {
	return fmt.Sprintf("attach grant for %s (window %d, until %s)", g.Holder.ID, g.Window, g.Expires().UTC().Format(time.RFC3339))
}
