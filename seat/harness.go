package seat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cotal-go/cotal/config"
)

// Readiness rules of a seat (persona key `ready:`): a coding-agent harness
// is ready when its MCP client has connected to its `cotal mcp` (which
// tells the connector); a plain command when it drew its first output and
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

// harnessMCP wires a harness seat to its own `cotal mcp`: the arguments
// and environment that name it, and the config file some harnesses read,
// written into the seat's launch directory (which only the seat sees).
func (m *Manager) harnessMCP(p *Persona, dir string) (args, env []string, err error) {
	exe := m.cotalBinary()
	server := map[string]any{"command": exe, "args": []string{"mcp"}}
	switch p.Harness {
	case "claude":
		path := filepath.Join(dir, "mcp.json")
		if err := writeJSON(path, map[string]any{"mcpServers": map[string]any{"cotal": server}}); err != nil {
			return nil, nil, err
		}
		return []string{"--mcp-config", path}, nil, nil
	case "codex":
		return []string{"-c", "mcp_servers.cotal.command=" + tomlString(exe), "-c", `mcp_servers.cotal.args=["mcp"]`}, nil, nil
	case "opencode":
		path := filepath.Join(dir, "opencode.json")
		cfg := map[string]any{"$schema": "https://opencode.ai/config.json",
			"mcp": map[string]any{"cotal": map[string]any{"type": "local", "command": []string{exe, "mcp"}, "enabled": true}}}
		if err := writeJSON(path, cfg); err != nil {
			return nil, nil, err
		}
		return nil, []string{"OPENCODE_CONFIG=" + path}, nil
	}
	return nil, nil, nil
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
