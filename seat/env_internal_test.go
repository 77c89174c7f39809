package seat

import (
	"slices"
	"testing"
)

func TestSeatEnvironmentTakesItsHarnessInputsOnly(t *testing.T) {
	environ := []string{
		"PATH=/bin", "HOME=/home/u", "LC_ALL=C", "TERM=dumb", "COTAL_HOME=/store", "XDG_DATA_HOME=/data",
		"ANTHROPIC_API_KEY=a", "OPENAI_API_KEY=o", "CODEX_HOME=/c", "CLAUDE_CONFIG_DIR=/cl", "GITHUB_TOKEN=g", "COTAL_NAME=forged",
	}
	persona := []string{"PATH=/persona/bin", "EXTRA=1"}
	knobs := []string{"COTAL_NAME=alice", "COTAL_CREDS=/run/seats/alice-1/seat.creds"}
	for _, c := range []struct {
		harness string
		want    []string
	}{
		{"claude", []string{"PATH=/persona/bin", "HOME=/home/u", "LC_ALL=C", "ANTHROPIC_API_KEY=a", "CLAUDE_CONFIG_DIR=/cl", "EXTRA=1", "COTAL_NAME=alice", "COTAL_CREDS=/run/seats/alice-1/seat.creds"}},
		{"codex", []string{"PATH=/persona/bin", "HOME=/home/u", "LC_ALL=C", "OPENAI_API_KEY=o", "CODEX_HOME=/c", "EXTRA=1", "COTAL_NAME=alice", "COTAL_CREDS=/run/seats/alice-1/seat.creds"}},
		{"opencode", []string{"PATH=/persona/bin", "HOME=/home/u", "LC_ALL=C", "ANTHROPIC_API_KEY=a", "OPENAI_API_KEY=o", "EXTRA=1", "COTAL_NAME=alice", "COTAL_CREDS=/run/seats/alice-1/seat.creds"}},
		{"command", []string{"PATH=/persona/bin", "HOME=/home/u", "LC_ALL=C", "EXTRA=1", "COTAL_NAME=alice", "COTAL_CREDS=/run/seats/alice-1/seat.creds"}},
	} {
		got := seatEnvironment(c.harness, environ, persona, knobs)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.harness, got, c.want)
		}
	}
}
