package seat

import (
	"context"
	"time"
)

// CloseStopWait is closeStopWait, for the bounds of tests that close a
// manager.
const CloseStopWait = closeStopWait

// OnStarted makes f run between a seat's process starting and its launch
// taking it, until the test ends.
func OnStarted(t interface{ Cleanup(func()) }, f func(ctx context.Context)) {
	testHookStarted = f
	t.Cleanup(func() { testHookStarted = nil })
}

// ReadinessBound is readinessBound: a seat's bound from its spawn's ask,
// its persona and its manager.
func ReadinessBound(asked time.Duration, p *Persona, manager time.Duration) time.Duration {
	return readinessBound(asked, p, manager)
}
