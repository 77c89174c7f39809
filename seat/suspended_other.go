//go:build !linux

package seat

// suspended cannot tell a stopped process here.
func suspended(int) bool { return false }
