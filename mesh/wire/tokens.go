package wire

import (
	"strings"
	"unicode/utf8"
)

// MaxTokenLength bounds owner, actor and space tokens so they stay usable inside subjects and JetStream names.
const MaxTokenLength = 64

// isWordByte is the owner/actor alphabet: [A-Za-z0-9_].
func isWordByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_'
}

// IsNameByte is the routing-token alphabet [A-Za-z0-9_-], which is also
// the control surface's id and nonce alphabet.
func IsNameByte(c byte) bool { return isWordByte(c) || c == '-' }

// AllBytes reports whether s is non-empty and every byte passes ok: the
// one check behind every token alphabet of wire and ep.
func AllBytes(s string, ok func(byte) bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// ValidToken reports whether s can fill an owner or actor slot as-is; those slots are refused, never rewritten, and '-' is kept for the dash-form.
func ValidToken(s string) bool {
	return len(s) <= MaxTokenLength && AllBytes(s, isWordByte)
}

// SanitizeToken turns a free-form space or role name into one routing token; it is lossy, so never decode a token back into a name.
func SanitizeToken(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "_"
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < utf8.RuneSelf && IsNameByte(byte(r)) {
			b.WriteByte(byte(r))
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ValidSpace refuses a space name the user typed when SanitizeToken would have to change it, so two spellings never share a mesh.
func ValidSpace(s string) error {
	if len(s) > MaxTokenLength || !AllBytes(s, IsNameByte) {
		return refuse(ErrInvalidSpace, "invalid space name %q: use 1-%d characters of A-Z a-z 0-9 _ -", s, MaxTokenLength)
	}
	return nil
}

// ownerPrefix starts every authenticated owner token.
const ownerPrefix = "u_"

// ownerSuffixLength is the number of base32 characters after ownerPrefix.
const ownerSuffixLength = 26

// isBase32Lower is the owner-token alphabet after the prefix: [a-z2-7].
func isBase32Lower(c byte) bool { return 'a' <= c && c <= 'z' || '2' <= c && c <= '7' }

// isBase32Upper is the nkey alphabet: [A-Z2-7].
func isBase32Upper(c byte) bool { return 'A' <= c && c <= 'Z' || '2' <= c && c <= '7' }

// ValidOwner reports whether s is a real principal owner: "local" in open mode, or a derived u_ token in auth mode.
func ValidOwner(s string) bool {
	if s == "local" {
		return true
	}
	return len(s) == len(ownerPrefix)+ownerSuffixLength &&
		strings.HasPrefix(s, ownerPrefix) &&
		AllBytes(s[len(ownerPrefix):], isBase32Lower)
}

// nkeyLength is the length of an encoded NATS public nkey.
const nkeyLength = 56

// IsNkeyShaped spots a connection nkey where a principal belongs; the nkey authenticates transport only and is never an owner.
func IsNkeyShaped(s string) bool {
	return len(s) == nkeyLength && AllBytes(s, isBase32Upper)
}
