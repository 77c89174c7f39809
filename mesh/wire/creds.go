package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrNotCreds is returned by ParseCreds when the bytes hold no user JWT.
var ErrNotCreds = errors.New("not a creds file")

// CredsInfo is what a creds file says about its holder. It is read without
// checking the signature: the broker checks that on connect.
type CredsInfo struct {
	Principal Principal
	CredTags
}

// ParseCreds reads the principal and cotal tags out of a creds file, so a
// client holding only the file knows who it is.
func ParseCreds(b []byte) (CredsInfo, error) {
	tok, err := credsJWT(b)
	if err != nil {
		return CredsInfo{}, err
	}
	parts := bytes.Split(tok, []byte("."))
	if len(parts) != 3 {
		return CredsInfo{}, fmt.Errorf("%w: the JWT has %d parts", ErrNotCreds, len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(string(parts[1]))
	if err != nil {
		return CredsInfo{}, fmt.Errorf("%w: %v", ErrNotCreds, err)
	}
	var claims struct {
		Name string `json:"name"`
		Nats struct {
			Type string   `json:"type"`
			Tags []string `json:"tags"`
		} `json:"nats"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return CredsInfo{}, fmt.Errorf("%w: %v", ErrNotCreds, err)
	}
	if claims.Nats.Type != "user" {
		return CredsInfo{}, fmt.Errorf("%w: the JWT is a %q, not a user", ErrNotCreds, claims.Nats.Type)
	}
	p, err := ParsePrincipal(claims.Name)
	if err != nil {
		return CredsInfo{}, fmt.Errorf("creds name %q is not a cotal principal: %w", claims.Name, err)
	}
	return CredsInfo{Principal: p, CredTags: DecodeCredTags(claims.Nats.Tags)}, nil
}

// credsJWT finds the user JWT between the creds file's dashed markers.
func credsJWT(b []byte) ([]byte, error) {
	const begin = "BEGIN NATS USER JWT"
	i := bytes.Index(b, []byte(begin))
	if i < 0 {
		return nil, ErrNotCreds
	}
	rest := b[i+len(begin):]
	nl := bytes.IndexByte(rest, '\n')
	if nl < 0 {
		return nil, ErrNotCreds
	}
	rest = rest[nl+1:]
	end := bytes.Index(rest, []byte("---"))
	if end < 0 {
		return nil, ErrNotCreds
	}
	tok := bytes.TrimSpace(rest[:end])
	if len(tok) == 0 {
		return nil, ErrNotCreds
	}
	return tok, nil
}
