package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// waitingReported waits for a real harness's seat to be waiting on its
// person for asks: its row in ps --json (answerable, the mesh's status
// waiting too), then the roster and the dashboard's NEEDS YOU (the line
// needsYou matches). It logs how long after the model asked (asked: the
// scripted server's clock on the request the prompt answers) the seat
// reported it (its own stamp) and the roster and NEEDS YOU were seen to
// show it (polled, so a bound from above). The figure is logged, not
// asserted: BenchmarkPromptToWaiting measures it.
func waitingReported(t *testing.T, home, dir, space, name, asks string, asked time.Time, d *tmuxCotal, needsYou *regexp.Regexp) {
	t.Helper()
	var since time.Time
	waitFor(t, 30*time.Second, func() error {
		r := seatRowJSON(t, home, dir, space, name)
		if r.Agent == nil || r.Agent.State != "waiting" || r.Agent.Asks != asks || !r.Agent.Answerable || r.Mesh != "waiting" {
			return fmt.Errorf("ps: %+v / %+v", r, r.Agent)
		}
		since = time.UnixMilli(r.Agent.SinceMs)
		return nil
	})
	var roster, needs time.Duration
	waitFor(t, 30*time.Second, func() error {
		if roster == 0 {
			out, _, _ := runIn2(t, home, dir, space, "roster")
			if !strings.Contains(out, "waiting") || !strings.Contains(out, asks) {
				return fmt.Errorf("roster:\n%s", out)
			}
			roster = time.Since(asked)
		}
		if needs == 0 {
			if s := d.screen(); !needsYou.MatchString(s) {
				return fmt.Errorf("NEEDS YOU:\n%s", s)
			}
			needs = time.Since(asked)
		}
		return nil
	})
	ps, _, _ := runIn2(t, home, dir, space, "ps")
	if !strings.Contains(ps, name+": "+asks) || !strings.Contains(ps, "cotal approve "+name) {
		t.Errorf("ps does not say what %s asks:\n%s", name, ps)
	}
	t.Logf("prompt to waiting, %s: the seat reported it %s after the model asked; the roster showed it by %s, NEEDS YOU by %s",
		name, since.Sub(asked).Round(time.Millisecond), roster.Round(time.Millisecond), needs.Round(time.Millisecond))
}
