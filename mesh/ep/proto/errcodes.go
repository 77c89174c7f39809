package proto

import (
	"errors"
	"fmt"
	"strings"
)

// The error codes of spec §3; a reverse-DNS code (see ValidCode) may extend them.
const (
	CodeBadRequest         = "bad-request"
	CodeUnsupportedVersion = "unsupported-version"
	CodeOpMismatch         = "op-mismatch"
	CodeClassMismatch      = "class-mismatch"
	CodeTargetMismatch     = "target-mismatch"
	CodeSenderMismatch     = "sender-mismatch"
	CodeUnauthenticated    = "unauthenticated"
	CodePermissionDenied   = "permission-denied"
	CodeNotFound           = "not-found"
	CodeAlreadyExists      = "already-exists"
	CodeConflict           = "conflict"
	CodeContractMismatch   = "contract-mismatch"
	CodeContractInvalid    = "contract-invalid"
	CodeFailedPrecondition = "failed-precondition"
	CodeDeadlineExceeded   = "deadline-exceeded"
	CodeCancelled          = "cancelled"
	CodeExpired            = "expired"
	CodeUnavailable        = "unavailable"
	CodeUnimplemented      = "unimplemented"
	CodeResourceExhausted  = "resource-exhausted"
	CodeInternal           = "internal"
)

// Detail kinds the spec names.
const (
	BindRefusedKind      = "ai.cotal.ep.bind-refused"      // a bind to another instance or epoch: did not run
	LifecycleBlockedKind = "ai.cotal.ep.lifecycle-blocked" // a same-name spawn during teardown
)

var catalog = map[string]bool{
	CodeBadRequest: true, CodeUnsupportedVersion: true, CodeOpMismatch: true, CodeClassMismatch: true,
	CodeTargetMismatch: true, CodeSenderMismatch: true, CodeUnauthenticated: true, CodePermissionDenied: true,
	CodeNotFound: true, CodeAlreadyExists: true, CodeConflict: true, CodeContractMismatch: true,
	CodeContractInvalid: true, CodeFailedPrecondition: true, CodeDeadlineExceeded: true, CodeCancelled: true,
	CodeExpired: true, CodeUnavailable: true, CodeUnimplemented: true, CodeResourceExhausted: true, CodeInternal: true,
}

// ValidCode reports whether code is a catalog code or a reverse-DNS extension (three or more DNS labels, as com.acme.throttled), at most 64 bytes.
func ValidCode(code string) bool {
	if len(code) > 64 {
		return false
	}
	return catalog[code] || reverseDNS(code)
}

func reverseDNS(s string) bool {
	labels := strings.Split(s, ".")
	if len(labels) < 3 {
		return false
	}
	for _, l := range labels {
		if !validLabel(l) {
			return false
		}
	}
	return true
}

// Outcome says whether a failed request's effect ran; only NotExecuted licenses a re-issue.
type Outcome string

// The three outcomes of spec §3.
const (
	NotExecuted Outcome = "not-executed" // refused before the handler ran
	Executed    Outcome = "executed"     // failed after the handler ran
	Unknown     Outcome = "unknown"      // no proof either way: deadline, lost transport, or no outcome given
)

func (o Outcome) valid() bool { return o == NotExecuted || o == Executed || o == Unknown }

// Error is the error member of a reply and the Go error for it; unwrap one with errors.As.
type Error struct {
	Code    string           `json:"code"`
	Message string           `json:"message"`
	Details []map[string]any `json:"details,omitempty"` // each has a reverse-DNS "kind"
	Outcome Outcome          `json:"outcome,omitempty"`
}

// Error prints code: message, the way the CLI shows a refusal.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Is matches another *Error with the same code, so errors.Is(err, &ep.Error{Code: ep.CodeNotFound}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// EffectiveOutcome reads a missing or unrecognized outcome as Unknown, as the spec requires of clients.
func (e *Error) EffectiveOutcome() Outcome {
	if e == nil || !e.Outcome.valid() {
		return Unknown
	}
	return e.Outcome
}

// MayReissue reports whether the request provably did not run, the only case an automatic retry is safe for a write.
func (e *Error) MayReissue() bool { return e.EffectiveOutcome() == NotExecuted }

// WithDetail appends a detail {kind, fields…} and returns e.
func (e *Error) WithDetail(kind string, fields map[string]any) *Error {
	d := make(map[string]any, len(fields)+1)
	for k, v := range fields {
		d[k] = v
	}
	d["kind"] = kind
	e.Details = append(e.Details, d)
	return e
}

// HasDetail reports whether some detail carries kind.
func (e *Error) HasDetail(kind string) bool {
	if e == nil {
		return false
	}
	for _, d := range e.Details {
		if k, _ := d["kind"].(string); k == kind {
			return true
		}
	}
	return false
}

// Refuse is an error raised before the handler ran: outcome not-executed.
func Refuse(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Outcome: NotExecuted}
}

// Failed is an error raised after the handler ran: outcome executed.
func Failed(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Outcome: Executed}
}

// BindRefused is a refusal of a bind naming another incarnation (failed-precondition for another instance, expired for another epoch), marked so callers know it did not run.
func BindRefused(code, format string, args ...any) *Error {
	return Refuse(code, format, args...).WithDetail(BindRefusedKind, nil)
}

// AsError finds the *Error in err's chain, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
