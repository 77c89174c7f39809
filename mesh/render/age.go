package render

import (
	"fmt"
	"time"
)

// Age says how old a fact from t is at now, in one unit for a column: "-"
// when t is unknown (zero), "0s" for a fact from the future (clock skew),
// then seconds, minutes, hours up to two days, days.
func Age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < time.Second:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
