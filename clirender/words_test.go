package clirender

import (
	"strings"
	"testing"

	"github.com/cotal-go/cotal/host"
)

func TestHowEndedSaysTheSignal(t *testing.T) {
	for _, c := range []struct {
		process  string
		graceful bool
		want     string
	}{
		{"killed SIGTERM", true, "ended on SIGTERM"},
		{"killed SIGHUP", true, "ended on SIGHUP"},
		{"killed SIGKILL", true, "did not end within 3 s"},
		{"killed SIGKILL", false, "killed at once"},
		{"exited 3", true, "exited with status 3"},
	} {
		if got := HowEnded(c.process, c.graceful); !strings.Contains(got, c.want) {
			t.Errorf("HowEnded(%q, %v) = %q, want %q", c.process, c.graceful, got, c.want)
		}
	}
}

// TestDeliveriesSaysNothingWaits: a row with nothing waiting says so; its
// seat and why columns said "no answer", as of a manager that was silent.
func TestDeliveriesSaysNothingWaits(t *testing.T) {
	var out strings.Builder
	Deliveries(&out, []host.Delivery{{Name: "bash1", Presence: "idle"}, {Name: "root", Presence: "operator (you)", Operator: true, Stored: 1,
		Why: "unread: every dashboard shows them; r there (or cotal inbox) reads them"}}, false)
	s := out.String()
	if strings.Contains(s, "no answer") || !strings.Contains(s, "nothing waits") || strings.Contains(s, "offline") ||
		!strings.Contains(s, "every dashboard shows them") {
		t.Errorf("deliveries:\n%s", s)
	}
}

func TestTokensForAPerson(t *testing.T) {
	for n, want := range map[int64]string{950: "950", 1_000: "1.0k", 9_950: "9.9k", 12_345: "12k", 4_100_000: "4.1M"} {
		if got := Tokens(n); got != want {
			t.Errorf("Tokens(%d) = %q, want %q", n, got, want)
		}
	}
}
