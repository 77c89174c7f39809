package proto

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cotal-go/cotal/mesh/wire"
)

// DigestPrefix starts every content address.
// DigestPrefix begins every digest reference.
const DigestPrefix = "sha256:"

// VoidSchema is the schema of a payload-free side: the payload is absent or null.
const VoidSchema = `{"type":"null"}`

// VoidSchemaArtifactDigest is the artifact digest of VoidSchema, the document stored at epc.<hex>.
const VoidSchemaArtifactDigest = "sha256:bcde375ebd4cbacf651311181173836b169d5a360c6ac158c6a2cdaf49be3f61"

// VoidSchemaDigest is the closure digest of VoidSchema with no members, the value op.inputDigest or op.outputDigest carries for a payload-free side.
const VoidSchemaDigest = "sha256:1db0472aaee8e6b9d8d3d430ee021a1b6efc559ab7c0b99186898c972c53dd2d"

// Digest is the content address of one JSON document: sha256: and the lowercase hex SHA-256 of its RFC 8785 form.
func Digest(v []byte) (string, error) {
	c, err := Canonical(v)
	if err != nil {
		return "", err
	}
	return RawDigest(c), nil
}

// RawDigest addresses bytes exactly as given.
func RawDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return DigestPrefix + hex.EncodeToString(sum[:])
}

// Marshal encodes a Go value as RFC 8785 canonical JSON.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("ep: marshal for canonical JSON: %w", err)
	}
	return Canonical(b)
}

// DigestOf is Digest of a Go value's JSON encoding.
func DigestOf(v any) (string, error) {
	c, err := Marshal(v)
	if err != nil {
		return "", err
	}
	return RawDigest(c), nil
}

// ValidDigest reports whether s is exactly sha256: followed by 64 lowercase hex characters, the one spelling a digest field may carry.
func ValidDigest(s string) bool {
	h, err := DigestHex(s)
	return err == nil && DigestPrefix+h == s
}

// ClosureManifest is the §7 manifest whose digest names a contract closure.
type ClosureManifest struct {
	V       int      `json:"v"`
	Root    string   `json:"root"`
	Members []string `json:"members"`
}

// ClosureDigest names a contract: the digest of {v:1, root, members}, where members are the artifact digests reachable by reference from root (root itself only if re-reached), sorted and de-duplicated. References may be bare hex or sha256:<hex>; they are normalized to sha256:<hex>.
func ClosureDigest(root string, members []string) (string, error) {
	rootHex, err := DigestHex(root)
	if err != nil {
		return "", err
	}
	norm := make([]string, 0, len(members))
	for _, m := range members {
		h, err := DigestHex(m)
		if err != nil {
			return "", err
		}
		norm = append(norm, DigestPrefix+h)
	}
	slices.Sort(norm)
	norm = slices.Compact(norm)
	return DigestOf(ClosureManifest{V: 1, Root: DigestPrefix + rootHex, Members: norm})
}

// AuthDigest binds the opaque auth slot into a fingerprint: the SHA-256 of the slot's string value exactly as carried, never re-canonicalized. The slot must be a JSON string.
func AuthDigest(auth json.RawMessage) (string, error) {
	p := jcsParser{in: auth}
	p.space()
	if p.pos >= len(p.in) || p.in[p.pos] != '"' {
		return "", wire.Refuse(ErrInvalidJSON, "auth slot must be a JSON string")
	}
	s, err := p.str()
	if err != nil {
		return "", err
	}
	p.space()
	if p.pos != len(p.in) {
		return "", wire.Refuse(ErrInvalidJSON, "auth slot must be one JSON string")
	}
	return RawDigest([]byte(s)), nil
}

// FingerprintCaller is the caller as the fingerprint names it.
type FingerprintCaller struct {
	ID           string `json:"id"`
	LifecycleUID string `json:"lifecycleUid"`
}

// FingerprintInput is the effect-defining subset of a request (§5); a zero optional field is absent and left out of the digest, never written as null.
type FingerprintInput struct {
	Endpoint     string          // op.endpoint, the dotted name
	Command      string          //
	Class        string          // ephemeral | journal
	Authz        Mode            // from the subject; ModeNone is absent
	Target       *BodyTarget     // the body target as carried; nil is absent
	InputDigest  string          //
	OutputDigest string          //
	Args         json.RawMessage // nil is absent; JSON null is kept
	AuthDigest   string          // see AuthDigest; empty is absent
	Caller       FingerprintCaller
	GoalID       string
	ID           string
}

// Fingerprint is the journal/goal identity of a request: sha256 of the RFC 8785 form of its effect-defining fields. Same id and fingerprint is the same request; same id and another fingerprint is a conflict.
func Fingerprint(f FingerprintInput) (string, error) {
	obj := map[string]any{"caller": f.Caller}
	put := func(k, v string) {
		if v != "" {
			obj[k] = v
		}
	}
	put("endpoint", f.Endpoint)
	put("command", f.Command)
	put("class", f.Class)
	put("authz", string(f.Authz))
	put("inputDigest", f.InputDigest)
	put("outputDigest", f.OutputDigest)
	put("authDigest", f.AuthDigest)
	put("goalId", f.GoalID)
	put("id", f.ID)
	if f.Target != nil {
		obj["target"] = f.Target
	}
	if f.Args != nil {
		obj["args"] = f.Args
	}
	return DigestOf(obj)
}

// RequestFingerprint fingerprints a request as received: mode and caller from the subject, everything else from the body.
func RequestFingerprint(subject Request, body EndpointRequest) (string, error) {
	f := FingerprintInput{
		Endpoint:     body.Op.Endpoint,
		Command:      body.Op.Command,
		Class:        body.Class,
		Authz:        subject.Mode,
		Target:       body.Target,
		InputDigest:  body.Op.InputDigest,
		OutputDigest: body.Op.OutputDigest,
		Args:         body.Args,
		Caller:       FingerprintCaller{ID: subject.Caller.ID(), LifecycleUID: subject.Caller.UID},
		GoalID:       body.GoalID,
		ID:           body.ID,
	}
	if len(body.Auth) > 0 {
		d, err := AuthDigest(body.Auth)
		if err != nil {
			return "", err
		}
		f.AuthDigest = d
	}
	return Fingerprint(f)
}
