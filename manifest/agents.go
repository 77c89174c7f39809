package manifest

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh/wire"
)

var agentKeys = []string{"persona", "kind", "agent", "command", "args", "env", "cwd", "model", "variant", "role",
	"description", "instructions", "prompt", "capabilities", "count", "personaPermissions"}

// agents reads agents:, each an agent file (a path or a persona's name), an
// agent file with overrides (persona: plus keys), or inline keys.
func (r *reader) agents(m *Manifest, e entry, harness, perms string) error {
	es, err := r.mapping(e.value, "agents")
	if err != nil {
		return err
	}
	seats := map[string]string{}
	for _, ae := range es {
		a, err := r.agent(m, ae, harness, perms)
		if err != nil {
			return err
		}
		names := a.Seats()
		if a.Kind == config.KindEndpoint {
			names = []string{a.Name}
		}
		for _, s := range names {
			if other, taken := seats[s]; taken {
				return r.at(ae.keyN, "agent %s would take the name %s, which agent %s takes too; rename one", a.Name, s, other)
			}
			seats[s] = a.Name
		}
		m.Agents = append(m.Agents, a)
	}
	slices.SortFunc(m.Agents, func(a, b *Agent) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

func (r *reader) agent(m *Manifest, e entry, harness, perms string) (*Agent, error) {
	if !wire.ValidToken(e.key) {
		return nil, r.at(e.keyN, "agent name %q must be one token of A-Z a-z 0-9 _ (at most %d characters): seats and credentials are named after it", e.key, wire.MaxTokenLength)
	}
	if why := wire.ReservedActor(e.key); why != "" {
		return nil, r.at(e.keyN, "agent name %q cannot be used: %s", e.key, why)
	}
	a := &Agent{Name: e.key, Kind: config.KindAgent, Count: 1}
	var fields []entry
	switch v := r.anchors.Resolve(e.value).(type) {
	case ast.ScalarNode:
		if _, null := v.(*ast.NullNode); null {
			return nil, r.at(e.value, "agents.%s has no value: name its agent file, or give its keys (agent, command, role, ...)", a.Name)
		}
		ref, err := r.str(e)
		if err != nil {
			return nil, err
		}
		if a.file, a.Persona, err = r.persona(m, e.value, a.Name, ref); err != nil {
			return nil, err
		}
	default:
		var err error
		if fields, err = r.mapping(e.value, "agents."+a.Name); err != nil {
			return nil, err
		}
		for _, f := range fields {
			if f.key != "persona" {
				continue
			}
			ref, err := r.str(f)
			if err != nil {
				return nil, err
			}
			if a.file, a.Persona, err = r.persona(m, f.value, a.Name, ref); err != nil {
				return nil, err
			}
		}
	}
	if f := a.file; f != nil {
		a.Kind, a.Harness, a.Command, a.Args, a.Env = f.Kind, f.Agent, f.Launch.Command, f.Launch.Args, f.Launch.Env
		a.Cwd, a.Model, a.Variant, a.Role, a.Description = f.Launch.Cwd, f.Model, f.Variant, f.Role, f.Description
		a.Instructions, a.Capabilities = f.Prompt, f.Capabilities
		if a.Cwd != "" && !filepath.IsAbs(a.Cwd) {
			a.Cwd = filepath.Join(m.Dir, a.Cwd)
		}
	}
	var cwdN ast.Node
	for _, f := range fields {
		var err error
		switch f.key {
		case "persona":
		case "kind":
			if a.Kind, err = r.str(f); err == nil && a.Kind != config.KindAgent && a.Kind != config.KindEndpoint {
				err = r.at(f.value, "kind %q: use %s (a seat the mesh runs) or %s (a credential for a program that connects itself)", a.Kind, config.KindAgent, config.KindEndpoint)
			}
		case "agent":
			a.Harness, err = r.harness(f)
		case "command":
			a.Command, err = r.str(f)
		case "args":
			var items []item
			if items, err = r.strings(f); err == nil {
				a.Args = values(items)
			}
		case "env":
			a.Env, err = r.env(f)
		case "cwd":
			if a.Cwd, err = r.str(f); err == nil {
				cwdN = f.value
				if !filepath.IsAbs(a.Cwd) {
					a.Cwd = filepath.Join(m.Dir, a.Cwd)
				}
			}
		case "model":
			a.Model, err = r.str(f)
		case "variant":
			a.Variant, err = r.str(f)
		case "role":
			if a.Role, err = r.str(f); err == nil {
				a.Role = strings.ToLower(a.Role)
				if !wire.ValidToken(a.Role) {
					err = r.at(f.value, "role %q must be one token of a-z 0-9 _", a.Role)
				}
			}
		case "description":
			a.Description, err = r.str(f)
		case "instructions":
			a.Instructions, err = r.str(f)
		case "prompt":
			a.Prompt, err = r.str(f)
		case "capabilities":
			a.Capabilities, err = r.capabilities(f)
		case "count":
			a.counted = true
			if a.Count, err = r.integer(f); err == nil && (a.Count < 1 || a.Count > MaxCount) {
				err = r.at(f.value, "count %d: an agent runs 1 to %d seats", a.Count, MaxCount)
			}
		case "personaPermissions":
			perms, err = r.perms(f)
		case "continuity":
			err = r.at(f.keyN, "continuity is not supported by this cotal: a seat starts a fresh session; leave it out")
		default:
			err = r.unknown(f, "agents."+a.Name, agentKeys)
		}
		if err != nil {
			return nil, err
		}
	}
	if a.Harness == "" {
		a.Harness = harness
	}
	if a.Harness == "" {
		a.Harness = "claude"
	}
	switch {
	case a.Kind == config.KindEndpoint && a.Count > 1:
		return nil, r.at(e.keyN, "agents.%s: an endpoint is one credential; count is for seats", a.Name)
	case a.Kind == config.KindAgent && a.Harness == "command" && a.Command == "":
		return nil, r.at(e.keyN, "agents.%s runs agent: command and needs a command: naming the program", a.Name)
	case a.Kind == config.KindAgent && a.counted && len(a.Seats()[a.Count-1]) > wire.MaxTokenLength:
		return nil, r.at(e.keyN, "agents.%s: its seats' names (%s) are longer than %d characters", a.Name, a.Seats()[a.Count-1], wire.MaxTokenLength)
	}
	if a.Cwd != "" {
		if st, err := os.Stat(a.Cwd); err != nil || !st.IsDir() {
			n := cwdN
			if n == nil {
				n = e.keyN
			}
			return nil, r.at(n, "agents.%s: cwd %s is not a folder", a.Name, a.Cwd)
		}
	}
	if f := a.file; f != nil {
		switch {
		case perms == PersonaInclude:
			a.Subscribe = slices.Clone(f.Subscribe)
			a.AllowSubscribe = slices.Clone(f.AllowSubscribe)
			a.AllowPublish = slices.Clone(f.AllowPublish)
		case len(f.Subscribe)+len(f.AllowSubscribe)+len(f.AllowPublish) > 0:
			m.Notes = append(m.Notes, fmt.Sprintf("%s: the channel lists of %s are not used (personaPermissions: reject); the manifest's channels decide its rights", a.Name, a.Persona))
		}
	}
	a.Subscribe, a.AllowSubscribe, a.AllowPublish = nonNil(a.Subscribe), nonNil(a.AllowSubscribe), nonNil(a.AllowPublish)
	a.Capabilities, a.Args, a.Env = nonNil(a.Capabilities), nonNil(a.Args), nonNil(a.Env)
	return a, nil
}

// persona loads the agent file ref names: a path (relative to the
// manifest's folder) or a persona's name in .cotal/agents/.
func (r *reader) persona(m *Manifest, n ast.Node, agent, ref string) (*config.AgentFile, string, error) {
	path := ref
	if !strings.ContainsAny(ref, `/\`) && !strings.HasSuffix(ref, ".md") {
		if !wire.ValidToken(ref) && ref != "" {
			return nil, "", r.at(n, "agents.%s: persona %q is neither a path nor a persona's name", agent, ref)
		}
		path = filepath.Join(config.AgentsDir(m.Dir), ref+".md")
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(m.Dir, path)
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return nil, "", r.at(n, "agents.%s: %q %v (no file %s)", agent, ref, errNoPersona, path)
	}
	f, err := config.LoadAgentFile(path)
	if err != nil {
		var fe *config.AgentFileError
		if errors.As(err, &fe) {
			return nil, "", r.at(n, "agents.%s: its agent file is refused: %v", agent, err)
		}
		return nil, "", r.at(n, "agents.%s: reading %s: %v", agent, path, err)
	}
	return f, path, nil
}

func (r *reader) env(e entry) ([]string, error) {
	es, err := r.mapping(e.value, "env")
	if err != nil {
		return nil, err
	}
	vals := map[string]string{}
	for _, v := range es {
		if v.key == "" || strings.ContainsAny(v.key, "= \t\x00") {
			return nil, r.at(v.keyN, "env: %q is not a variable name", v.key)
		}
		s, err := r.str(v)
		if err != nil {
			return nil, err
		}
		vals[v.key] = s
	}
	out := []string{}
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		out = append(out, k+"="+vals[k])
	}
	return out, nil
}

func (r *reader) capabilities(e entry) ([]string, error) {
	items, err := r.strings(e)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, it := range items {
		c := it.value
		switch {
		case c == config.CapSpawn, c == config.CapRun:
		case strings.EqualFold(c, "admin"):
			return nil, r.at(it.n, "capability %q is never grantable: admin belongs to the space's operator", c)
		case strings.HasPrefix(c, config.CapRolePrefix):
			role := strings.ToLower(strings.TrimPrefix(c, config.CapRolePrefix))
			if !wire.ValidToken(role) {
				return nil, r.at(it.n, "capability %q: the role must be one token of a-z 0-9 _", c)
			}
			c = config.CapRolePrefix + role
		default:
			return nil, r.at(it.n, "unknown capability %q: use %s, %s or %s<role>", c, config.CapSpawn, config.CapRun, config.CapRolePrefix)
		}
		out = append(out, c)
	}
	return out, nil
}

func values(items []item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.value
	}
	return out
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
