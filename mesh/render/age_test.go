package render_test

import (
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh/render"
)

func TestAge(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		ago  time.Duration
		zero bool
		want string
	}{
		{name: "unknown", zero: true, want: "-"},
		{name: "from the future (clock skew)", ago: -90 * time.Second, want: "0s"},
		{name: "now", ago: 0, want: "0s"},
		{name: "under a second", ago: 999 * time.Millisecond, want: "0s"},
		{name: "one second", ago: time.Second, want: "1s"},
		{name: "seconds round down", ago: 59*time.Second + 999*time.Millisecond, want: "59s"},
		{name: "one minute", ago: time.Minute, want: "1m"},
		{name: "minutes round down", ago: 59*time.Minute + 59*time.Second, want: "59m"},
		{name: "one hour", ago: time.Hour, want: "1h"},
		{name: "hours drop the minutes", ago: 3*time.Hour + 5*time.Minute, want: "3h"},
		{name: "hours up to two days", ago: 47*time.Hour + 59*time.Minute, want: "47h"},
		{name: "two days", ago: 48 * time.Hour, want: "2d"},
		{name: "days round down", ago: 100*24*time.Hour + 23*time.Hour, want: "100d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := now.Add(-tc.ago)
			if tc.zero {
				at = time.Time{}
			}
			if got := render.Age(now, at); got != tc.want {
				t.Errorf("Age(now, now-%s) = %q, want %q", tc.ago, got, tc.want)
			}
		})
	}
}
