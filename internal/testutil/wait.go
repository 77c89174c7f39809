// Package testutil holds the polling helpers tests share. It never sleeps
// to wait for a condition: it polls one with a deadline.
package testutil

import (
	"testing"
	"time"
)

// WaitFor polls fn every 10 ms until it returns nil or total passes, then
// fails the test with fn's last error.
func WaitFor(t testing.TB, total time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(total)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: %v", total, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
