package seat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/seat/client"
)

// Readiness rules of a seat (persona key `ready:`): a coding-agent harness
// is ready when its MCP client has connected to its `cotal mcp` (which
// tells the connector), and, for a harness that reports itself, when its
// own start says so; a plain command when it drew its first output and
// was still running a moment later.
const (
	ReadyMCP    = config.ReadyMCP
	ReadyOutput = config.ReadyOutput
)

// readiness is the persona's rule: mcp for the harnesses, output for a
// command unless it says `ready: mcp` (a command that runs `cotal mcp`).
func readiness(p *Persona) string {
	if r := p.Launch.Ready; r != "" {
		return r
	}
	if p.Harness == "command" {
		return ReadyOutput
	}
	return ReadyMCP
}

// OpencodeReadiness is opencode's own readiness bound: a Bun program that
// loads its provider catalogue at start, it was seen taking 30 s to near
// 2 min to connect its MCP client on a loaded two-core machine.
const OpencodeReadiness = 3 * time.Minute

// readinessBound is how long a seat has to come up before its spawn reads
// uncertain: the spawn's ask, else its persona's readiness:, else the
// manager's --readiness, else its harness's (30 s; 3 min for opencode).
func readinessBound(asked time.Duration, p *Persona, manager time.Duration) time.Duration {
	switch {
	case asked > 0:
		return asked
	case p.Launch.Readiness > 0:
		return p.Launch.Readiness
	case manager > 0:
		return manager
	case p.Harness == "opencode":
		return OpencodeReadiness
	}
	return DefaultReadiness
}

// harness is how the manager drives one kind of seat program. The core
// (agent.go, hook.go, handout.go, inject.go) is the same for all; a kind
// with integration points of its own lives in a file of its own
// (harness_claude.go) and plugs in here, in harnessFor.
type harness interface {
	// launch prepares the seat's launch: the arguments put before the
	// persona's, the environment added, and files written into the
	// seat's launch directory (0600; only the seat sees it).
	launch(l launchCtx) (args, env []string, err error)
	// reports says the harness reports its own state (hooks, events):
	// then nothing is typed into it but the nudge, and only while its
	// reports say it sits idle at its own prompt.
	reports() bool
	// hook answers one hook event of the seat (see hook.go).
	hook(h *hookCall) (client.HookReply, error)
	// screen reads the seat's screen: whether it shows the harness idle at
	// its own prompt, or a dialog.
	screen(lines []string) screenRead
	// readsScreen says screen reads anything at all: a command without a
	// prompt rule reads nothing, so its screen need not be drawn as text.
	readsScreen() bool
	// fullScreen says the program draws on the alternate screen itself
	// (a harness's own TUI), so being there says nothing of its prompt;
	// for any other program it means a full-screen program is up.
	fullScreen() bool
	// sessionAtStart says its hooks report a session as soon as it starts
	// (Claude Code's SessionStart); a harness whose session begins with
	// its first turn (Codex) is ready by its MCP client and its screen.
	sessionAtStart() bool
	// nests says it runs a sandbox of its own inside the seat (bwrap),
	// which needs user and mount namespaces there.
	nests() bool
}

// launchCtx is what a harness's launch gets.
type launchCtx struct {
	p   *Persona
	dir string // the seat's launch directory
	exe string // the cotal binary the seat runs as `cotal`
	// knobs are the names of the seat's COTAL_* variables, which its
	// `cotal mcp` and `cotal hook` read.
	knobs []string
	// environ is the seat's environment before the harness adds to it.
	environ []string
}

// env is the value of a variable of the seat's environment, "" if unset.
func (l launchCtx) env(key string) string {
	v := ""
	for _, kv := range l.environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// screenRead is what a harness reads off a seat's screen.
type screenRead struct {
	known    bool   // the harness has a rule for its screen
	atPrompt bool   // idle at its own prompt, nothing over it
	dialog   string // the question of a dialog it shows, "" for none
}

// harnessFor is the harness of a persona.
func harnessFor(p *Persona) (harness, error) {
	switch p.Harness {
	case "claude":
		return claudeHarness{}, nil
	case "codex":
		return codexHarness{prompt: p.Prompt}, nil
	case "opencode":
		return opencodeHarness{prompt: p.Prompt}, nil
	case "command":
		return commandHarnessFor(p)
	}
	return nil, fmt.Errorf("unknown harness %q", p.Harness)
}

// errNoHooks answers a hook event of a harness that has none.
var errNoHooks = fmt.Errorf("this seat's harness has no hooks")

// commandHarness is a plain command. Its persona may name the screen of
// its idle prompt (`idlePrompt:`, a regular expression the last non-empty
// line of its screen must match, trailing blanks trimmed, like '^\$$'):
// typed delivery then waits for it.
type commandHarness struct{ prompt *regexp.Regexp }

func commandHarnessFor(p *Persona) (harness, error) {
	rule := p.Launch.IdlePrompt
	if rule == "" {
		return commandHarness{}, nil
	}
	re, err := regexp.Compile(rule)
	if err != nil {
		return nil, fmt.Errorf("persona %s: idlePrompt %q is not a regular expression: %v", p.Name, rule, err)
	}
	return commandHarness{prompt: re}, nil
}

func (commandHarness) launch(launchCtx) ([]string, []string, error) { return nil, nil, nil }
func (commandHarness) reports() bool                                { return false }
func (commandHarness) fullScreen() bool                             { return false }
func (commandHarness) sessionAtStart() bool                         { return false }
func (commandHarness) nests() bool                                  { return false }
func (commandHarness) hook(*hookCall) (client.HookReply, error) {
	return client.HookReply{}, errNoHooks
}

// screen matches the prompt rule against the last line drawn; without a
// rule it knows nothing.
func (h commandHarness) readsScreen() bool { return h.prompt != nil }

func (h commandHarness) screen(lines []string) screenRead {
	if h.prompt == nil {
		return screenRead{}
	}
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			last = lines[i]
			break
		}
	}
	return screenRead{known: true, atPrompt: h.prompt.MatchString(last)}
}

// cotalBinary is the program a seat runs as `cotal`: the binary that runs
// this manager (under `go run .` too), so that inside a seat `cotal send`
// acts as the seat.
func (m *Manager) cotalBinary() string {
	if m.opts.Launcher != "" {
		return m.opts.Launcher
	}
	exe, err := os.Executable()
	if err != nil {
		return "cotal"
	}
	return exe
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// tomlString quotes s as a TOML basic string (codex reads -c values as TOML).
func tomlString(s string) string { return strconv.Quote(s) }

// withCotalOnPath puts the directory of the cotal binary first on a
// seat's PATH.
func withCotalOnPath(env []string, exe string) []string {
	dir := filepath.Dir(exe)
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + dir + string(os.PathListSeparator) + v
			return env
		}
	}
	return append(env, "PATH="+dir)
}
