//go:build !race

package testutil

// RaceBuild reports whether the test binary was built with -race.
const RaceBuild = false
