package seat

import (
	"slices"
	"strings"
)

// osEnv is what a seat takes from the manager's environment whatever its
// harness: how to find programs, who and where the user is, the locale,
// the terminal's colours, the user's config and cache dirs, and how to
// reach the network (proxies and extra CA certificates, without which a
// harness behind a corporate proxy cannot reach its model). Never
// XDG_DATA_HOME or COTAL_HOME: both lead to the space's store. TERM is set
// by the pty. Anything else a seat needs comes from its persona's env: map.
var osEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "COLORTERM",
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
}

// osEnvPrefixes are families of variables a seat takes whole.
var osEnvPrefixes = []string{"LC_"}

// connectorEnv are the inputs each harness reads from its environment:
// its model credentials and where it keeps its config. A seat gets its own
// harness's and no other's.
var connectorEnv = map[string][]string{
	"claude":   {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL", "CLAUDE_CONFIG_DIR"},
	"codex":    {"OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"},
	"opencode": {"OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY"},
}

// seatEnvironment builds a seat's environment: from environ only what the
// allow-list and the harness's connector inputs name, then the persona's
// KEY=VALUE pairs, then the COTAL_* knobs; a later source wins.
func seatEnvironment(harness string, environ, persona, knobs []string) []string {
	allowed := func(k string) bool {
		if slices.Contains(osEnv, k) || slices.Contains(connectorEnv[harness], k) {
			return true
		}
		return slices.ContainsFunc(osEnvPrefixes, func(p string) bool { return strings.HasPrefix(k, p) })
	}
	var keys []string
	vals := map[string]string{}
	set := func(kv string) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return
		}
		if _, seen := vals[k]; !seen {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); allowed(k) {
			set(kv)
		}
	}
	for _, kv := range persona {
		set(kv)
	}
	for _, kv := range knobs {
		set(kv)
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+vals[k])
	}
	return out
}
