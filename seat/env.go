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

// family is a harness's own variables: names taken as they are, and
// prefixes whose every variable is taken.
type family struct {
	names, prefixes []string
}

func (f family) has(k string) bool {
	return slices.Contains(f.names, k) || slices.ContainsFunc(f.prefixes, func(p string) bool { return strings.HasPrefix(k, p) })
}

// harnessEnv are the variables each harness reads from its environment:
// its settings and switches, its model credentials and where it keeps its
// config. A seat gets its own harness's and no other's.
var harnessEnv = map[string]family{
	"claude": {
		names:    []string{"CLAUDE_CONFIG_DIR", "MCP_TIMEOUT", "MCP_TOOL_TIMEOUT", "MAX_THINKING_TOKENS", "BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS"},
		prefixes: []string{"CLAUDE_CODE_", "ANTHROPIC_", "DISABLE_"},
	},
	"codex":    {prefixes: []string{"CODEX_", "OPENAI_", "AZURE_OPENAI_"}},
	"opencode": {names: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY"}, prefixes: []string{"OPENCODE_"}},
}

// cloudEnv are the cloud providers' families Claude Code reads when it is
// told to use that cloud (its switch set in the environment, as 1 or
// true): Bedrock's AWS credentials and region, Vertex's Google project,
// credentials and regions.
var cloudEnv = []struct {
	harness, when string
	family        family
}{
	{"claude", "CLAUDE_CODE_USE_BEDROCK", family{prefixes: []string{"AWS_"}}},
	{"claude", "CLAUDE_CODE_USE_VERTEX", family{names: []string{"CLOUD_ML_REGION"}, prefixes: []string{"GOOGLE_", "GCLOUD_", "CLOUDSDK_", "VERTEX_REGION_"}}},
}

// never are variables no seat gets from the manager, whatever family
// names them: both lead to the space's store.
var never = []string{"COTAL_HOME", "XDG_DATA_HOME"}

// switchedOn reports whether environ sets key to a true value.
func switchedOn(environ []string, key string) bool {
	for _, kv := range environ {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			v = strings.ToLower(strings.TrimSpace(v))
			return v != "" && v != "0" && v != "false" && v != "no"
		}
	}
	return false
}

// seatEnvironment builds a seat's environment: from environ only what the
// allow-list and the harness's families name, then the persona's
// KEY=VALUE pairs, then the COTAL_* knobs; a later source wins.
func seatEnvironment(harness string, environ, persona, knobs []string) []string {
	fams := []family{harnessEnv[harness]}
	for _, c := range cloudEnv {
		if c.harness == harness && switchedOn(environ, c.when) {
			fams = append(fams, c.family)
		}
	}
	allowed := func(k string) bool {
		switch {
		case slices.Contains(never, k):
			return false
		case slices.Contains(osEnv, k), slices.ContainsFunc(fams, func(f family) bool { return f.has(k) }):
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
