package wire

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalidSpace is returned by ValidSpace when a space name would have to be rewritten to become a token.
	ErrInvalidSpace = errors.New("invalid space name")

	// ErrInvalidPrincipal is returned when an owner or actor is not a single valid token; principals are refused, never rewritten.
	ErrInvalidPrincipal = errors.New("invalid principal")

	// ErrInvalidChannel is returned by ValidateChannel when a channel or pattern breaks the policy rule (so ACLs never alias).
	ErrInvalidChannel = errors.New("invalid channel")

	// ErrWildcardTarget is returned when a publish target contains a * or > segment.
	ErrWildcardTarget = errors.New("wildcard publish target")

	// ErrNoSender is returned by ParseSubject when the subject is not a cotal chat, inst or svc subject of the right arity (retired ctl. subjects included).
	ErrNoSender = errors.New("subject carries no sender")

	// ErrUnsurfaceable is returned by Subject.Surfaceable when the sender tokens are not a real principal (for example an nkey in the owner slot).
	ErrUnsurfaceable = errors.New("sender is not a principal")

	// ErrSenderMismatch is returned by Decode when from.id is missing or differs from the sender the subject authenticates.
	ErrSenderMismatch = errors.New("sender mismatch")

	// ErrInvalidMessage is returned by Message.Validate when an envelope would not conform to the schema.
	ErrInvalidMessage = errors.New("invalid message")
)

// ruleError reads as a sentence for people while errors.Is still finds its sentinel.
type ruleError struct {
	kind error
	msg  string
}

func (e *ruleError) Error() string { return e.msg }
func (e *ruleError) Unwrap() error { return e.kind }

// Refuse builds an error whose text is exactly the formatted message, for a
// person, and which errors.Is still matches to kind. The mesh packages use
// it for every refusal they name a sentinel for.
func Refuse(kind error, format string, args ...any) error {
	return &ruleError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// refuse is Refuse inside this package.
var refuse = Refuse
