package presence

import "errors"

var (
	// ErrInvalidStatus is returned by ParseStatus and Writer.Set for a status a live client may not write.
	ErrInvalidStatus = errors.New("invalid presence status")

	// ErrInvalidAttention is returned by ParseAttention and Writer.SetAttention for an unknown mode.
	ErrInvalidAttention = errors.New("invalid attention")

	// ErrInvalidCard is returned by Writer.Start when the card could not be published under its own key.
	ErrInvalidCard = errors.New("invalid presence card")

	// ErrClosed is returned when a writer or watcher is used after Close.
	ErrClosed = errors.New("presence closed")

	// ErrStarted is returned by Start on a writer or watcher that was already started.
	ErrStarted = errors.New("presence already started")

	// ErrWriteStuck is what OnStuck receives (wrapped with the last failure) when writes have failed for a full TTL (spec presence-write-stuck).
	ErrWriteStuck = errors.New("presence-write-stuck")
)
