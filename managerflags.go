package main

import (
	"fmt"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/seat"
)

// The flags of the commands that run a manager (up, supervise) and spawn.

// readinessHelp is the --readiness of a command that runs a manager.
var readinessHelp = fmt.Sprintf("how long a spawned seat has to come up before its spawn reads uncertain, unless the spawn or its persona says (default 30s; %s for opencode)", seat.OpencodeReadiness)

// checkReadiness refuses a readiness bound out of the agent file's range;
// 0 is "not said": a default follows.
func checkReadiness(d time.Duration) error {
	if d == 0 || (d >= config.MinReadiness && d <= config.MaxReadiness) {
		return nil
	}
	return usagef("--readiness %s: give a duration from %s to %s, like 90s or 3m", d, config.MinReadiness, config.MaxReadiness)
}

// checkMaxSessions refuses a manager with no room for an attach session.
func checkMaxSessions(n int) error {
	if n < 1 {
		return usagef("--max-sessions %d: the manager needs room for at least 1 attach session", n)
	}
	return nil
}
