package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Resolved is one agent as the mesh runs it: the manager spawns a declared
// seat from it, and the applied state keeps one per agent to tell what a
// changed file changes.
type Resolved struct {
	Name           string   `json:"name"`
	Kind           string   `json:"kind"`
	Persona        string   `json:"persona,omitempty"`
	Harness        string   `json:"harness"`
	Command        string   `json:"command,omitempty"`
	Args           []string `json:"args"`
	Env            []string `json:"env"`
	Cwd            string   `json:"cwd,omitempty"`
	Model          string   `json:"model,omitempty"`
	Variant        string   `json:"variant,omitempty"`
	Role           string   `json:"role,omitempty"`
	Description    string   `json:"description,omitempty"`
	Instructions   string   `json:"instructions,omitempty"`
	Prompt         string   `json:"prompt,omitempty"`
	Inject         *bool    `json:"inject,omitempty"`
	Ready          string   `json:"ready,omitempty"`
	IdlePrompt     string   `json:"idlePrompt,omitempty"`
	ReadinessMs    int64    `json:"readinessMs,omitempty"`
	Worktree       bool     `json:"worktree,omitempty"`
	SetupRun       string   `json:"setupRun,omitempty"`
	SetupCopy      []string `json:"setupCopy,omitempty"`
	Budget         int64    `json:"budget,omitempty"`
	Capabilities   []string `json:"capabilities"`
	Subscribe      []string `json:"subscribe"`
	AllowSubscribe wire.ACL `json:"allowSubscribe"`
	AllowPublish   wire.ACL `json:"allowPublish"`
	Seats          []string `json:"seats"`
}

// Resolve is the agent as the mesh runs it.
func (a *Agent) Resolve() Resolved {
	r := Resolved{
		Name: a.Name, Kind: a.Kind, Persona: a.Persona, Harness: a.Harness, Command: a.Command, Args: a.Args, Env: a.Env,
		Cwd: a.Cwd, Model: a.Model, Variant: a.Variant, Role: a.Role, Description: a.Description,
		Instructions: a.Instructions, Prompt: a.Prompt, Capabilities: a.Capabilities,
		Subscribe: a.Subscribe, AllowSubscribe: a.AllowSubscribe, AllowPublish: a.AllowPublish, Seats: nonNil(a.Seats()),
	}
	if f := a.file; f != nil {
		r.Inject, r.Ready, r.IdlePrompt = f.Launch.Inject, f.Launch.Ready, f.Launch.IdlePrompt
		r.ReadinessMs = f.Launch.Readiness.Milliseconds()
		r.Worktree, r.SetupRun, r.SetupCopy, r.Budget = f.Launch.Worktree, f.Launch.Setup.Run, f.Launch.Setup.Copy, f.Launch.Budget
	}
	return r
}

// AgentFile is the persona a manager spawns a seat of r from.
func (r Resolved) AgentFile() *config.AgentFile {
	h := r.Harness
	if h == "" {
		h = "claude"
	}
	return &config.AgentFile{
		Path: r.Persona, Name: r.Name, Role: r.Role, Kind: r.Kind, Description: r.Description,
		Subscribe: slices.Clone(r.Subscribe), AllowSubscribe: slices.Clone(r.AllowSubscribe), AllowPublish: slices.Clone(r.AllowPublish),
		Model: r.Model, Variant: r.Variant, Agent: h, Capabilities: slices.Clone(r.Capabilities),
		Launch: config.Launch{Command: r.Command, Args: slices.Clone(r.Args), Env: slices.Clone(r.Env), Cwd: r.Cwd,
			Inject: r.Inject, Ready: r.Ready, IdlePrompt: r.IdlePrompt, Readiness: time.Duration(r.ReadinessMs) * time.Millisecond, Worktree: r.Worktree,
			Setup: config.Setup{Run: r.SetupRun, Copy: slices.Clone(r.SetupCopy)}, Budget: r.Budget},
		Prompt: r.Instructions,
	}
}

// RightsChanges lists what differs between the rights r and o are minted
// with (role, capabilities, the three channel lists), as "key: old -> new".
func (r Resolved) RightsChanges(o Resolved) []string {
	var out []string
	diff := func(k string, a, b []string) {
		if !slices.Equal(a, b) {
			out = append(out, fmt.Sprintf("%s: %s -> %s", k, list(a), list(b)))
		}
	}
	if r.Role != o.Role {
		out = append(out, fmt.Sprintf("role: %q -> %q", r.Role, o.Role))
	}
	diff("capabilities", r.Capabilities, o.Capabilities)
	diff("subscribe", r.Subscribe, o.Subscribe)
	diff("allowSubscribe", r.AllowSubscribe, o.AllowSubscribe)
	diff("allowPublish", r.AllowPublish, o.AllowPublish)
	return out
}

// LaunchChanges lists what differs in how a seat of r and of o runs.
func (r Resolved) LaunchChanges(o Resolved) []string {
	var out []string
	s := func(k, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s: %q -> %q", k, short(a), short(b)))
		}
	}
	l := func(k string, a, b []string) {
		if !slices.Equal(a, b) {
			out = append(out, fmt.Sprintf("%s: %s -> %s", k, list(a), list(b)))
		}
	}
	s("kind", r.Kind, o.Kind)
	s("agent", r.Harness, o.Harness)
	s("command", r.Command, o.Command)
	l("args", r.Args, o.Args)
	if !slices.Equal(r.Env, o.Env) {
		out = append(out, "env changed") // values may be secret: never printed
	}
	s("cwd", r.Cwd, o.Cwd)
	s("model", r.Model, o.Model)
	s("variant", r.Variant, o.Variant)
	s("description", r.Description, o.Description)
	s("instructions", r.Instructions, o.Instructions)
	s("prompt", r.Prompt, o.Prompt)
	s("ready", r.Ready, o.Ready)
	s("idlePrompt", r.IdlePrompt, o.IdlePrompt)
	if r.ReadinessMs != o.ReadinessMs {
		out = append(out, fmt.Sprintf("readiness: %s -> %s", time.Duration(r.ReadinessMs)*time.Millisecond, time.Duration(o.ReadinessMs)*time.Millisecond))
	}
	s("setup run", r.SetupRun, o.SetupRun)
	l("setup copy", r.SetupCopy, o.SetupCopy)
	if r.Worktree != o.Worktree {
		out = append(out, fmt.Sprintf("worktree: %t -> %t", r.Worktree, o.Worktree))
	}
	if r.Budget != o.Budget {
		out = append(out, fmt.Sprintf("budget: %d -> %d", r.Budget, o.Budget))
	}
	if (r.Inject == nil) != (o.Inject == nil) || r.Inject != nil && *r.Inject != *o.Inject {
		out = append(out, "inject changed")
	}
	return out
}

func list(l []string) string { return "[" + strings.Join(l, ", ") + "]" }

func short(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:37]) + "..."
	}
	return s
}

// State is what `up -f` last applied to a space: kept under the store's
// auth folder, where no seat can read or change it.
type State struct {
	Manifest    string                        `json:"manifest"`
	Space       string                        `json:"space"`
	Open        bool                          `json:"open,omitempty"`
	StartedMesh bool                          `json:"startedMesh,omitempty"` // up -f started the mesh, so down -f may stop it
	AppliedAt   time.Time                     `json:"appliedAt"`
	Defaults    mesh.ChannelConfig            `json:"defaults"`
	Channels    map[string]mesh.ChannelConfig `json:"channels"`
	Agents      map[string]Resolved           `json:"agents"`
}

// StateFile is where a space keeps what up -f applied.
func StateFile(p config.Paths) string { return filepath.Join(p.AuthDir(), "manifest.json") }

// DeclaredFile is where a space keeps the agents its manager spawns
// declared seats from: the file being applied, written before its seats
// are spawned.
func DeclaredFile(p config.Paths) string { return filepath.Join(p.AuthDir(), "declared.json") }

// ReadState reads what was applied; nil when nothing was.
func ReadState(p config.Paths) (*State, error) {
	var s State
	ok, err := readJSON(StateFile(p), &s)
	if !ok {
		return nil, err
	}
	if s.Agents == nil {
		s.Agents = map[string]Resolved{}
	}
	if s.Channels == nil {
		s.Channels = map[string]mesh.ChannelConfig{}
	}
	return &s, nil
}

// WriteState records what was applied (0600).
func WriteState(p config.Paths, s *State) error { return writeJSON(p, StateFile(p), s) }

// RemoveState forgets what was applied and what is declared.
func RemoveState(p config.Paths) error {
	for _, f := range []string{StateFile(p), DeclaredFile(p)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// WriteDeclared records the agents a manager may spawn as declared.
func WriteDeclared(p config.Paths, agents map[string]Resolved) error {
	return writeJSON(p, DeclaredFile(p), agents)
}

// Declared returns the declared agent named, or nil when none is.
func Declared(p config.Paths, name string) (*Resolved, error) {
	var m map[string]Resolved
	ok, err := readJSON(DeclaredFile(p), &m)
	if !ok || err != nil {
		return nil, err
	}
	if r, found := m[name]; found {
		return &r, nil
	}
	return nil, nil
}

func readJSON(path string, v any) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("%s is not valid (%v): remove it and run `cotal up -f` again", path, err)
	}
	return true, nil
}

func writeJSON(p config.Paths, path string, v any) error {
	if err := config.EnsureDir(p.AuthDir(), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return config.WriteFileAtomic(path, append(b, '\n'), 0o600)
}

// DeclaredSeats are the seats what up -f last applied declares, sorted;
// nil when nothing was applied or the record cannot be read.
func DeclaredSeats(p config.Paths) []string {
	st, err := ReadState(p)
	if st == nil || err != nil {
		return nil
	}
	var out []string
	for _, a := range st.Agents {
		out = append(out, a.Seats...)
	}
	slices.Sort(out)
	return out
}
