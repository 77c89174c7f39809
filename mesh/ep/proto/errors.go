package proto

import (
	"errors"
)

var (
	// ErrInvalidToken is returned by a subject builder when a token breaks its grammar; builders refuse, never rewrite.
	ErrInvalidToken = errors.New("invalid ep subject token")

	// ErrSubjectTooLong is returned by a subject builder when the subject would exceed MaxSubjectBytes.
	ErrSubjectTooLong = errors.New("ep subject too long")

	// ErrNotRail is returned by ParseRequest and ParseReply when a subject is not an ep rail of the exact arity; such a subject has no sender and is ignored.
	ErrNotRail = errors.New("not an ep rail subject")

	// ErrInvalidJSON is returned by Canonical when the input is not one JSON text.
	ErrInvalidJSON = errors.New("invalid JSON")

	// ErrDuplicateKey is returned by Canonical when an object names a member twice, which two readers could resolve differently.
	ErrDuplicateKey = errors.New("duplicate JSON object key")

	// ErrNumberRange is returned by Canonical when a number overflows an IEEE 754 double.
	ErrNumberRange = errors.New("JSON number out of range")

	// ErrInvalidText is returned by Canonical when a string is not well-formed Unicode (bad UTF-8 or a lone surrogate), so it has no interchangeable form.
	ErrInvalidText = errors.New("JSON string is not well-formed Unicode")

	// ErrInvalidDigest is returned when a digest reference is not sha256:<64 lowercase hex> (or the bare hex where allowed).
	ErrInvalidDigest = errors.New("invalid digest")
)
