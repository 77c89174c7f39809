package host

import (
	"testing"
	"time"
)

func TestQuitRule(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	type ask struct {
		at    time.Duration // after t0
		force bool
		live  bool
		want  bool
	}
	for _, c := range []struct {
		name string
		asks []ask
	}{
		{"nothing live quits at once", []ask{{0, false, false, true}}},
		{"live seats: the first is refused", []ask{{0, false, true, false}}},
		{"a second within the window goes on", []ask{{0, false, true, false}, {9 * time.Second, false, true, true}}},
		{"a second after the window is refused again", []ask{{0, false, true, false}, {10 * time.Second, false, true, false}, {15 * time.Second, false, true, true}}},
		{"SIGTERM goes on at once", []ask{{0, true, true, true}}},
		{"seats gone since the refusal", []ask{{0, false, true, false}, {time.Minute, false, false, true}}},
	} {
		var q quitRule
		for i, a := range c.asks {
			if got := q.ask(t0.Add(a.at), a.force, a.live); got != a.want {
				t.Errorf("%s: ask %d (at +%s, force %v, live %v) = %v, want %v", c.name, i, a.at, a.force, a.live, got, a.want)
			}
		}
	}
}
