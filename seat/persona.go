// Package seat is the manager endpoint and the seats it runs: personas
// become launches, spawns are goals with a real outcome, each seat's mesh
// identity is held by a connector, and ps, screen, input and despawn are
// ordinary control-surface commands any client can discover. It imports
// config, the mesh packages, seat/pty and seat/sandbox; never tui, broker
// or the host (credentials are minted through the Minter the process hands
// it).
package seat

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cotal-go/cotal/config"
)

// ErrNoPersona is returned when no agent file names the persona.
var ErrNoPersona = errors.New("no such persona")

// ErrHarnessMissing is returned when a persona's harness binary is not
// installed.
var ErrHarnessMissing = errors.New("harness not installed")

// Persona is an agent file read as a launch: what runs, where, with which
// identity and rights.
type Persona struct {
	*config.AgentFile
	Harness string   // claude, codex, opencode or command
	Path    string   // the program
	Args    []string // its arguments
	Cwd     string
	Env     []string // extra KEY=VALUE pairs
}

// harnessBinaries are the programs of the known coding-agent harnesses.
var harnessBinaries = map[string]string{"claude": "claude", "codex": "codex", "opencode": "opencode"}

// LoadPersona reads .cotal/agents/<name>.md of the project and resolves its
// launch; a harness that is not installed is refused naming the binary.
func LoadPersona(projectDir, name string) (*Persona, error) {
	path := filepath.Join(config.AgentsDir(projectDir), name+".md")
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w %q: no %s (personas here: %s)", ErrNoPersona, name, path, strings.Join(ListPersonas(projectDir), ", "))
	}
	a, err := config.LoadAgentFile(path)
	if err != nil {
		return nil, err
	}
	p := &Persona{AgentFile: a, Harness: a.Agent}
	if p.Harness == "" {
		p.Harness = "claude"
	}
	if cwd, ok := a.Meta["cwd"].(string); ok {
		p.Cwd = cwd
	}
	if env, ok := a.Meta["env"].(map[string]any); ok {
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p.Env = append(p.Env, fmt.Sprintf("%s=%v", k, env[k]))
		}
	}
	switch p.Harness {
	case "command":
		cmd, _ := a.Meta["command"].(string)
		if cmd == "" {
			return nil, fmt.Errorf("%s: agent: command needs a command: line naming the program", path)
		}
		p.Path = cmd
		if args, ok := a.Meta["args"].([]any); ok {
			for _, x := range args {
				p.Args = append(p.Args, fmt.Sprint(x))
			}
		}
	default:
		bin, ok := harnessBinaries[p.Harness]
		if !ok {
			return nil, fmt.Errorf("%s: unknown harness %q: use claude, codex, opencode or command", path, p.Harness)
		}
		p.Path = bin
		if a.Model != "" {
			p.Args = append(p.Args, "--model", a.Model)
		}
	}
	if _, err := exec.LookPath(p.Path); err != nil {
		return nil, fmt.Errorf("%w: persona %s runs %s, and %q is not in PATH", ErrHarnessMissing, name, p.Harness, p.Path)
	}
	return p, nil
}

// ListPersonas names the agent files of a project.
func ListPersonas(projectDir string) []string {
	ents, _ := os.ReadDir(config.AgentsDir(projectDir))
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".md"); ok && !e.IsDir() {
			out = append(out, n)
		}
	}
	return out
}
