package tui

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The conditions a seat can be in that need its person, as the dashboard
// reads them from a ps row.

// crash is how a seat's process ended when it ended on its own and badly:
// a non-zero status, or a signal no stop sent. A seat a stop ended, or
// one that exited 0, did not crash.
func (s *Seat) crash() (string, bool) {
	if s.Running() || s.Process == "" || s.Stopped {
		return "", false
	}
	if strings.HasPrefix(s.Process, "killed") {
		return s.Process, true
	}
	if code, ok := strings.CutPrefix(s.Process, "exited "); ok && code != "0" {
		return s.Process, true
	}
	return "", false
}

// quiet is how long a running seat has made no progress: since its
// model's last answer when its transcript is read (answered), else since
// its last output, or since it started when it never printed.
func (s *Seat) quiet(now time.Time) (time.Duration, bool) {
	if !s.Running() {
		return 0, false
	}
	if t, ok := s.answered(); ok {
		return now.Sub(t), true
	}
	last := s.LastOutput
	if last.IsZero() {
		last = s.Started
	}
	if last.IsZero() {
		return 0, false
	}
	return now.Sub(last), true
}

// stalled reports how long a seat with something to do has printed
// nothing, when that is longer than StallAfter: one that says it is
// working, or, whatever its mesh status says, one whose connector has
// messages waiting to be typed into it (not held by its person, not left
// for its own inbox read).
func (s *Seat) stalled(now time.Time) (time.Duration, bool) {
	busy := s.Mesh == "working" || (s.Injects && s.Held == "" && s.Waiting > s.PullOnly)
	if !busy {
		return 0, false
	}
	d, ok := s.quiet(now)
	return d, ok && d > StallAfter
}

// held says why messages wait for the seat's person and how many, when
// any do: "person typing, 2 waiting".
func (s *Seat) held() (string, bool) {
	if s.Held == "" || !s.Running() || s.Waiting == 0 {
		return "", false
	}
	return fmt.Sprintf("%s, %d waiting", s.Held, s.Waiting), true
}

// minutes is a stall's length as the roster says it: "7m".
func minutes(d time.Duration) string { return fmt.Sprintf("%dm", int(math.Round(d.Minutes()))) }
