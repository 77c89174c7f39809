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
	"slices"
	"strings"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
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
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("%w %q: a persona is named by its agent file's name, with no path (personas here: %s)", ErrNoPersona, name, strings.Join(ListPersonas(projectDir), ", "))
	}
	path := filepath.Join(config.AgentsDir(projectDir), name+".md")
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w %q: no %s (personas here: %s)", ErrNoPersona, name, path, strings.Join(ListPersonas(projectDir), ", "))
	}
	a, err := config.LoadAgentFile(path)
	if err != nil {
		return nil, err
	}
	return personaOf(a)
}

// personaOf resolves a checked agent file's launch.
func personaOf(a *config.AgentFile) (*Persona, error) {
	path, name := a.Path, a.Name
	p := &Persona{AgentFile: a, Harness: a.Agent}
	if p.Harness == "" {
		p.Harness = "claude"
	}
	p.Cwd, p.Env = a.Launch.Cwd, a.Launch.Env
	switch p.Harness {
	case "command":
		if a.Launch.Command == "" {
			return nil, fmt.Errorf("%s: agent: command needs a command: line naming the program", path)
		}
		p.Path, p.Args = a.Launch.Command, a.Launch.Args
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

// persona is the persona a spawn names: the one the space's manifest
// declares, else the project's agent file.
func (m *Manager) persona(name string) (*Persona, error) {
	if m.opts.Declared != nil {
		a, err := m.opts.Declared(name)
		if err != nil {
			return nil, fmt.Errorf("reading the space's declared agents: %w", err)
		}
		if a != nil {
			return personaOf(a)
		}
	}
	return LoadPersona(m.opts.ProjectDir, name)
}

// TypedIn reports whether messages are typed into the terminal of a seat
// of this persona (otherwise it reads them with cotal inbox).
func (p *Persona) TypedIn() bool { return injects(p) }

// personaInfo is what a spawner is told of the persona: never its prompt, its
// environment or its launch command.
func personaInfo(a *config.AgentFile) client.PersonaInfo {
	h := a.Agent
	if h == "" {
		h = "claude"
	}
	return client.PersonaInfo{
		Name: a.Name, Role: a.Role, Description: a.Description, Harness: h, Capabilities: a.Capabilities,
		Subscribe: a.Subscribe, AllowSubscribe: a.AllowSubscribe, AllowPublish: a.AllowPublish,
	}
}

// DescribePersonas is what the project's personas are to a spawner, by
// name; with only set, that one persona (ErrNoPersona when there is none).
// A persona that would not start says why in its Error.
func DescribePersonas(projectDir, only string) ([]client.PersonaInfo, error) {
	names := ListPersonas(projectDir)
	if only != "" {
		if !slices.Contains(names, only) {
			return nil, fmt.Errorf("%w %q (personas here: %s)", ErrNoPersona, only, strings.Join(names, ", "))
		}
		names = []string{only}
	}
	out := make([]client.PersonaInfo, 0, len(names))
	for _, n := range names {
		p, err := LoadPersona(projectDir, n)
		if p != nil {
			out = append(out, personaInfo(p.AgentFile))
			continue
		}
		info := client.PersonaInfo{Name: n, Error: err.Error()}
		if a, ferr := config.LoadAgentFile(filepath.Join(config.AgentsDir(projectDir), n+".md")); ferr == nil {
			info = personaInfo(a)
			info.Error = err.Error()
		}
		out = append(out, info)
	}
	return out, nil
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

// Declared resolves a persona the space's manifest declares: nil, nil
// when it declares none of that name.
type Declared func(name string) (*config.AgentFile, error)

// PersonaChoices lists the personas of a project for a person picking one
// to spawn, each with what runs and whether messages are typed in, or why
// no seat can be spawned from it; with none it says where it looked.
func PersonaChoices(projectDir string) ([]client.PersonaChoice, error) {
	names := ListPersonas(projectDir)
	if len(names) == 0 {
		return nil, fmt.Errorf("none in %s: add one as <name>.md", config.AgentsDir(projectDir))
	}
	out := make([]client.PersonaChoice, 0, len(names))
	for _, n := range names {
		c := client.PersonaChoice{Name: n}
		if !wire.ValidToken(n) {
			c.Invalid = fmt.Sprintf("%q is not one token of A-Z a-z 0-9 _ (at most %d characters), and seats are named after their persona: rename %s and its name: line",
				n, wire.MaxTokenLength, filepath.Join(config.AgentsDir(projectDir), n+".md"))
		} else if p, err := LoadPersona(projectDir, n); err != nil {
			c.Invalid = err.Error()
		} else {
			c.Harness, c.Typed = p.Harness, p.TypedIn()
		}
		out = append(out, c)
	}
	return out, nil
}
