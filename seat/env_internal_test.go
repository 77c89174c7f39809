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

// TestSeatEnvironmentFamilies: each harness takes its own families whole
// (Claude Code's CLAUDE_CODE_*, ANTHROPIC_*, DISABLE_*; Codex's CODEX_*,
// OPENAI_*, AZURE_OPENAI_*; opencode's OPENCODE_*), the Bedrock and Vertex
// sets only when Claude Code is told to use them, and never the store's
// paths or another harness's keys.
func TestSeatEnvironmentFamilies(t *testing.T) {
	base := []string{
		"COTAL_HOME=/store", "XDG_DATA_HOME=/data",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_MAX_OUTPUT_TOKENS=9", "ANTHROPIC_MODEL=m",
		"CODEX_SANDBOX=x", "OPENAI_BASE_URL=o", "AZURE_OPENAI_API_KEY=az",
		"OPENCODE_CONFIG_CONTENT={}", "OPENCODE_DISABLE_AUTOUPDATE=1",
		"AWS_REGION=eu", "AWS_PROFILE=p", "CLOUD_ML_REGION=us", "GOOGLE_CLOUD_PROJECT=g",
	}
	names := func(env []string) []string { return envNames(env) }
	for _, c := range []struct {
		harness string
		extra   []string
		want    []string
	}{
		{"claude", nil, []string{"DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY", "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "ANTHROPIC_MODEL"}},
		{"claude", []string{"CLAUDE_CODE_USE_BEDROCK=1"}, []string{"DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY", "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "ANTHROPIC_MODEL", "AWS_REGION", "AWS_PROFILE", "CLAUDE_CODE_USE_BEDROCK"}},
		{"claude", []string{"CLAUDE_CODE_USE_VERTEX=true"}, []string{"DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY", "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "ANTHROPIC_MODEL", "CLOUD_ML_REGION", "GOOGLE_CLOUD_PROJECT", "CLAUDE_CODE_USE_VERTEX"}},
		{"claude", []string{"CLAUDE_CODE_USE_BEDROCK=0"}, []string{"DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY", "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "ANTHROPIC_MODEL", "CLAUDE_CODE_USE_BEDROCK"}},
		{"codex", nil, []string{"CODEX_SANDBOX", "OPENAI_BASE_URL", "AZURE_OPENAI_API_KEY"}},
		{"opencode", nil, []string{"OPENCODE_CONFIG_CONTENT", "OPENCODE_DISABLE_AUTOUPDATE"}},
		{"command", []string{"CLAUDE_CODE_USE_BEDROCK=1"}, nil},
	} {
		got := names(seatEnvironment(c.harness, append(slices.Clone(base), c.extra...), nil, nil))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %q:\n got %q\nwant %q", c.harness, c.extra, got, c.want)
		}
	}
	// A persona may still set what it likes, the store's paths aside from
	// the manager's own environment.
	if got := seatEnvironment("codex", []string{"COTAL_HOME=/store"}, []string{"X=1"}, nil); !slices.Equal(got, []string{"X=1"}) {
		t.Errorf("persona env: %q", got)
	}
}
