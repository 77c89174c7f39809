package seat

import "context"

// CloseStopWait is closeStopWait, for the bounds of tests that close a
// manager.
const CloseStopWait = closeStopWait

// OnStarted makes f run between a seat's process starting and its launch
// taking it, until the test ends.
func OnStarted(t interface{ Cleanup(func()) }, f func(ctx context.Context)) {
	testHookStarted = f
	t.Cleanup(func() { testHookStarted = nil })
}
