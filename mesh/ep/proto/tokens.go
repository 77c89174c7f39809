package proto

import (
	"strconv"
	"strings"

	"github.com/cotal-go/cotal/mesh/wire"
)

// MaxSubjectBytes bounds every ep subject; builders refuse anything longer rather than truncate.
const MaxSubjectBytes = 1024

// MaxEndpointToken bounds the wire token of an endpoint name.
const MaxEndpointToken = 64

// The reserved commands every endpoint may serve; both are valid command tokens.
const (
	CommandDescribe = "describe" // discovery: untargeted, void args, on every rail
	CommandCancel   = "cancel"   // the action composite's cancel
)

// reservedEndpoints are the single-label names the system itself serves.
var reservedEndpoints = map[string]bool{"manager": true, "delivery": true, "auth": true}

// ReservedEndpoint reports whether name is a single-label system endpoint (manager, delivery, auth); building subjects for it is allowed, minting it to a third party is not.
func ReservedEndpoint(name string) bool { return reservedEndpoints[name] }

// ReservedCommand reports whether command is one of the spec's reserved words (describe, cancel).
func ReservedCommand(command string) bool {
	return command == CommandDescribe || command == CommandCancel
}

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// validLabel is one DNS label: [a-z0-9]([a-z0-9-]*[a-z0-9])?.
func validLabel(l string) bool {
	if !wire.AllBytes(l, func(c byte) bool { return isLowerAlnum(c) || c == '-' }) {
		return false
	}
	return l[0] != '-' && l[len(l)-1] != '-'
}

// validEndpointToken accepts the wire form: DNS labels joined by '_', at most MaxEndpointToken bytes.
func validEndpointToken(tok string) bool {
	if tok == "" || len(tok) > MaxEndpointToken {
		return false
	}
	for l := range strings.SplitSeq(tok, "_") {
		if !validLabel(l) {
			return false
		}
	}
	return true
}

// EndpointToken turns an endpoint name (ai.cotal.manager) or its wire token (ai_cotal_manager) into the token; labels never hold '_' or '.', so the two forms cannot be confused.
func EndpointToken(name string) (string, error) {
	tok := name
	if strings.Contains(name, ".") {
		tok = strings.ReplaceAll(name, ".", "_")
		if strings.Contains(name, "_") {
			tok = "" // a name mixing both separators is neither form
		}
	}
	if !validEndpointToken(tok) {
		return "", wire.Refuse(ErrInvalidToken, "endpoint %q must be DNS labels of a-z 0-9 - (no leading or trailing -) joined by '.', at most %d characters", name, MaxEndpointToken)
	}
	return tok, nil
}

// EndpointName recovers the dotted endpoint name from its wire token, the form op.endpoint carries.
func EndpointName(token string) string { return strings.ReplaceAll(token, "_", ".") }

// ValidCommand reports whether s is a command token: 1-32 of a-z 0-9 -.
func ValidCommand(s string) bool {
	return len(s) <= 32 && wire.AllBytes(s, func(c byte) bool { return isLowerAlnum(c) || c == '-' })
}

// ValidNonce reports whether s is a reply nonce: 22-64 of A-Z a-z 0-9 _ -.
func ValidNonce(s string) bool {
	return len(s) >= 22 && len(s) <= 64 && wire.AllBytes(s, wire.IsNameByte)
}

// ValidID reports whether s fits an id, instanceId, goalId or sessionId slot: 1-64 of A-Z a-z 0-9 _ -.
func ValidID(s string) bool { return len(s) <= 64 && wire.AllBytes(s, wire.IsNameByte) }

// validSpaceToken accepts a space token that SanitizeToken leaves unchanged, so a parsed space rebuilds to itself.
func validSpaceToken(s string) bool { return s != "" && wire.SanitizeToken(s) == s }

// validTopicToken accepts one event or fact topic token; wildcards and dots never reach a publish subject.
func validTopicToken(s string) bool { return wire.AllBytes(s, wire.IsNameByte) }

// parseEpoch reads a decimal uint in its one canonical spelling (no sign, no leading zeros).
func parseEpoch(s string) (uint64, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// sized refuses a subject longer than MaxSubjectBytes.
func sized(subject string) (string, error) {
	if len(subject) > MaxSubjectBytes {
		return "", wire.Refuse(ErrSubjectTooLong, "ep subject is %d bytes, over the %d-byte limit: %.80s…", len(subject), MaxSubjectBytes, subject)
	}
	return subject, nil
}

func commandTok(command string) (string, error) {
	if !ValidCommand(command) {
		return "", wire.Refuse(ErrInvalidToken, "command %q must be 1-32 characters of a-z 0-9 -", command)
	}
	return command, nil
}

// IDToken is v when it is an id token (ValidID), else ErrInvalidToken naming what.
func IDToken(what, v string) (string, error) {
	if !ValidID(v) {
		return "", wire.Refuse(ErrInvalidToken, "%s %q must be 1-64 characters of A-Z a-z 0-9 _ -", what, v)
	}
	return v, nil
}

func nonceTok(nonce string) (string, error) {
	if !ValidNonce(nonce) {
		return "", wire.Refuse(ErrInvalidToken, "nonce %q must be 22-64 characters of A-Z a-z 0-9 _ - (use NewNonce)", nonce)
	}
	return nonce, nil
}

func ownerTok(what, v string) (string, error) {
	if !wire.ValidOwner(v) {
		return "", wire.Refuse(ErrInvalidToken, "%s %q must be local or u_ followed by 26 characters of a-z 2-7", what, v)
	}
	return v, nil
}

func actorTok(what, v string) (string, error) {
	if !wire.ValidToken(v) {
		return "", wire.Refuse(ErrInvalidToken, "%s %q must be 1-%d characters of A-Z a-z 0-9 _", what, v, wire.MaxTokenLength)
	}
	return v, nil
}

func uidTok(what, v string) (string, error) {
	if !wire.ValidLifecycleUID(v) {
		return "", wire.Refuse(ErrInvalidToken, "%s %q must be 26-32 characters of a-z 0-9", what, v)
	}
	return v, nil
}
