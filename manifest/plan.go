package manifest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/mesh"
)

// Action is one kind of step a plan takes.
type Action string

// The steps of a plan, in the order they run.
const (
	StartMesh   Action = "start-mesh"   // no mesh runs the space: start one
	SetDefaults Action = "set-defaults" // write the space's channel defaults
	SetChannel  Action = "set-channel"  // write one channel's registry entry
	Mint        Action = "mint"         // an endpoint's credential, new or with changed rights
	Spawn       Action = "spawn"        // a declared seat that does not run
	Remint      Action = "remint"       // a seat's rights changed: it restarts under a new credential
	Restart     Action = "restart"      // a seat's launch changed: restarted only with --apply
	Remove      Action = "remove"       // an agent the file no longer names: stopped only with --prune
)

// Flags a step can wait on.
const (
	NeedsApply = "--apply"
	NeedsPrune = "--prune"
)

// Step is one thing up -f would do.
type Step struct {
	Action  Action   `json:"action"`
	Agent   string   `json:"agent,omitempty"`
	Seats   []string `json:"seats,omitempty"`
	Channel string   `json:"channel,omitempty"`
	Why     string   `json:"why"`
	Changes []string `json:"changes,omitempty"`
	// Needs names the flag the step waits on ("" when up -f does it).
	Needs string `json:"needs,omitempty"`
}

// Plan is what up -f would do to take the space from what runs to what
// the file says.
type Plan struct {
	Space     string   `json:"space"`
	Manifest  string   `json:"manifest"`
	Steps     []Step   `json:"steps"`
	Unchanged []string `json:"unchanged"` // agents with nothing to do
	Notes     []string `json:"notes"`
}

// Live is the running mesh as a plan sees it.
type Live struct {
	Running bool
	Open    bool                          // the running mesh's mode
	Seats   map[string]bool               // running seats by name
	Reg     map[string]mesh.ChannelConfig // the registry (nil: not read)
	Def     *mesh.ChannelConfig           // its defaults
}

// Refusal is a plan that cannot be applied at all.
type Refusal struct{ Why string }

func (r *Refusal) Error() string { return r.Why }

// MakePlan compares the file with what was applied (nil: nothing) and
// with what runs.
func MakePlan(m *Manifest, applied *State, live Live) (*Plan, error) {
	p := &Plan{Space: m.Space, Manifest: m.Path, Steps: []Step{}, Unchanged: []string{}, Notes: slices.Clone(m.Notes)}
	if p.Notes == nil {
		p.Notes = []string{}
	}
	if applied == nil {
		applied = &State{Agents: map[string]Resolved{}, Channels: map[string]mesh.ChannelConfig{}}
	}
	if applied.Manifest != "" && applied.Manifest != m.Path {
		p.Notes = append(p.Notes, fmt.Sprintf("space %s was last applied from %s: what only that file names is stopped only with --prune", m.Space, applied.Manifest))
	}
	if live.Running && live.Open != m.Open {
		want, runs := "authenticated", "open"
		if m.Open {
			want, runs = "open", "authenticated"
		}
		return nil, &Refusal{fmt.Sprintf("the file asks for an %s mesh, and mesh %s runs %s: stop it with `cotal down` first, or change broker.auth", want, m.Space, runs)}
	}
	if !live.Running {
		mode := "authenticated: per-agent credentials"
		if m.Open {
			mode = "OPEN: no authentication (broker.auth: false)"
		}
		p.Steps = append(p.Steps, Step{Action: StartMesh, Why: "no mesh runs space " + m.Space + " (" + mode + ")"})
	}
	if ch := configChanges(live.Def, applied.Defaults, m.Defaults, live.Reg != nil); len(ch) > 0 {
		p.Steps = append(p.Steps, Step{Action: SetDefaults, Why: "the space's channel defaults", Changes: ch})
	}
	for _, c := range m.Channels {
		var cur *mesh.ChannelConfig
		if e, ok := live.Reg[c.Name]; ok {
			cur = &e
		}
		if ch := configChanges(cur, applied.Channels[c.Name], c.Config, live.Reg != nil); len(ch) > 0 {
			why := "registry entry changed"
			if cur == nil && live.Reg != nil || live.Reg == nil && !hasChannel(applied, c.Name) {
				why = "new registry entry"
			}
			p.Steps = append(p.Steps, Step{Action: SetChannel, Channel: c.Name, Why: why, Changes: ch})
		}
	}
	for name := range applied.Channels {
		if !slices.ContainsFunc(m.Channels, func(c *Channel) bool { return c.Name == name }) {
			p.Notes = append(p.Notes, fmt.Sprintf("channel %s is no longer in the file: its registry entry is kept, and no agent of the file keeps a right on it", name))
		}
	}
	for _, a := range m.Agents {
		if a.Kind == config.KindEndpoint && m.Open {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: an open mesh takes no credentials, so there is none to mint; the program connects without one", a.Name))
			p.Unchanged = append(p.Unchanged, a.Name)
			continue
		}
		p.agentSteps(a.Resolve(), applied, live)
	}
	for _, name := range sortedKeys(applied.Agents) {
		if m.Agent(name) != nil {
			continue
		}
		old := applied.Agents[name]
		p.Steps = append(p.Steps, Step{Action: Remove, Agent: name, Seats: running(old.Seats, live), Why: "no longer in the file", Needs: NeedsPrune})
	}
	slices.SortStableFunc(p.Steps, func(a, b Step) int { return order(a.Action) - order(b.Action) })
	return p, nil
}

func (p *Plan) agentSteps(want Resolved, applied *State, live Live) {
	old, had := applied.Agents[want.Name]
	if want.Kind == config.KindEndpoint {
		switch {
		case !had || old.Kind != config.KindEndpoint:
			p.Steps = append(p.Steps, Step{Action: Mint, Agent: want.Name, Why: "new endpoint: a credential for the program that connects as it"})
		case len(old.RightsChanges(want)) > 0:
			p.Steps = append(p.Steps, Step{Action: Mint, Agent: want.Name, Why: "rights changed: minted again, which revokes its earlier credential", Changes: old.RightsChanges(want)})
		default:
			p.Unchanged = append(p.Unchanged, want.Name)
		}
		return
	}
	if had && old.Kind == config.KindEndpoint {
		p.Steps = append(p.Steps, Step{Action: Remove, Agent: want.Name, Why: "was an endpoint, is now a seat: its credential is revoked"})
		had = false
	}
	rights, launch := old.RightsChanges(want), old.LaunchChanges(want)
	var fresh, remint, restart []string
	for _, s := range want.Seats {
		switch {
		case !had || !slices.Contains(old.Seats, s) || live.Running && !live.Seats[s] || !live.Running:
			fresh = append(fresh, s)
		case len(rights) > 0:
			remint = append(remint, s)
		case len(launch) > 0:
			restart = append(restart, s)
		}
	}
	if len(fresh) > 0 {
		why := "new agent"
		if had {
			why = "declared, not running"
		}
		p.Steps = append(p.Steps, Step{Action: Spawn, Agent: want.Name, Seats: fresh, Why: why})
	}
	if len(remint) > 0 {
		p.Steps = append(p.Steps, Step{Action: Remint, Agent: want.Name, Seats: remint, Changes: append(rights, launch...),
			Why: "rights changed: a seat's credential is its lifecycle's, so the seat restarts under a new one and the old is revoked"})
	}
	if len(restart) > 0 {
		p.Steps = append(p.Steps, Step{Action: Restart, Agent: want.Name, Seats: restart, Changes: launch, Why: "launch changed", Needs: NeedsApply})
	}
	var gone []string
	if had {
		for _, s := range old.Seats {
			if !slices.Contains(want.Seats, s) {
				gone = append(gone, s)
			}
		}
	}
	if len(gone) > 0 {
		p.Steps = append(p.Steps, Step{Action: Remove, Agent: want.Name, Seats: running(gone, live), Why: "count lowered", Needs: NeedsPrune})
	}
	if len(fresh)+len(remint)+len(restart)+len(gone) == 0 {
		p.Unchanged = append(p.Unchanged, want.Name)
	}
}

func running(seats []string, live Live) []string {
	if !live.Running {
		return []string{}
	}
	out := []string{}
	for _, s := range seats {
		if live.Seats[s] {
			out = append(out, s)
		}
	}
	return out
}

func hasChannel(s *State, name string) bool {
	_, ok := s.Channels[name]
	return ok
}

func order(a Action) int {
	return slices.Index([]Action{StartMesh, SetDefaults, SetChannel, Mint, Remove, Remint, Restart, Spawn}, a)
}

// configChanges lists the fields the file sets that the registry (cur,
// when read) or else what was applied does not hold. A registry write
// merges, so a field the file stops setting is left as it is.
func configChanges(cur *mesh.ChannelConfig, applied, want mesh.ChannelConfig, read bool) []string {
	have := applied
	if read {
		have = mesh.ChannelConfig{}
		if cur != nil {
			have = *cur
		}
	}
	var out []string
	f := func(k, a, b string) {
		if b != "" && a != b {
			out = append(out, fmt.Sprintf("%s: %q -> %q", k, a, b))
		}
	}
	if want.Replay != nil && (have.Replay == nil || *have.Replay != *want.Replay) {
		was := "unset"
		if have.Replay != nil {
			was = fmt.Sprint(*have.Replay)
		}
		out = append(out, fmt.Sprintf("replay: %s -> %t", was, *want.Replay))
	}
	f("replayWindow", have.ReplayWindow, want.ReplayWindow)
	f("deliveryClass", have.DeliveryClass, want.DeliveryClass)
	f("description", have.Description, want.Description)
	f("instructions", short(have.Instructions), short(want.Instructions))
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Empty reports whether the plan does nothing up -f would do unasked.
func (p *Plan) Empty() bool {
	for _, s := range p.Steps {
		if s.Needs == "" {
			return false
		}
	}
	return true
}

// Text is the plan in words, one step a line.
func (p *Plan) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan for space %s from %s:\n", p.Space, p.Manifest)
	if len(p.Steps) == 0 {
		b.WriteString("  nothing to do: the mesh is as the file says\n")
	}
	for _, s := range p.Steps {
		b.WriteString("  " + s.Line() + "\n")
		for _, c := range s.Changes {
			b.WriteString("      " + c + "\n")
		}
	}
	if len(p.Unchanged) > 0 {
		fmt.Fprintf(&b, "  unchanged: %s\n", strings.Join(p.Unchanged, ", "))
	}
	for _, n := range p.Notes {
		b.WriteString("  note: " + n + "\n")
	}
	return b.String()
}

// Line is the step in one line, with the flag it waits on.
func (s Step) Line() string {
	if s.Needs != "" {
		return s.What() + " [only with " + s.Needs + "]"
	}
	return s.What()
}

// What is the step in one line.
func (s Step) What() string {
	var what string
	switch s.Action {
	case StartMesh:
		what = "start the mesh"
	case SetDefaults:
		what = "set the channel defaults"
	case SetChannel:
		what = "set channel " + s.Channel
	case Mint:
		what = "mint " + s.Agent
	case Spawn:
		what = "spawn " + strings.Join(s.Seats, ", ") + " (" + s.Agent + ")"
	case Remint:
		what = "re-mint " + strings.Join(s.Seats, ", ") + " (" + s.Agent + ")"
	case Restart:
		what = "restart " + strings.Join(s.Seats, ", ") + " (" + s.Agent + ")"
	case Remove:
		what = "remove " + s.Agent
		if len(s.Seats) > 0 {
			what += ": stop " + strings.Join(s.Seats, ", ")
		}
	}
	return what + ": " + s.Why
}
