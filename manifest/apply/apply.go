// Package apply takes a running mesh to what a manifest says: the
// registry, the endpoints' credentials and the declared seats, through the
// same commands any operator client uses (the registry, the issuer, the
// managers' spawn and despawn). It never starts or stops the mesh itself.
package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/manifest"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// Mesh is the running mesh as the operator reaches it.
type Mesh struct {
	Paths config.Paths
	Open  bool
	NC    *nats.Conn     // the operator's connection
	Seats *client.Client // the space's managers, as the operator
}

// Live reads what runs: the seats of every manager and the registry.
func Live(ctx context.Context, ms Mesh) (manifest.Live, error) {
	l := manifest.Live{Running: true, Open: ms.Open, Seats: map[string]bool{}}
	cs, err := ms.Seats.Census(ctx, "")
	if err != nil {
		return l, fmt.Errorf("listing the seats: %w", err)
	}
	if cs.Incomplete() {
		return l, fmt.Errorf("not every manager answered the census (%d missing): what runs is not known; try again", len(cs.Missing)+len(cs.Failed))
	}
	for _, r := range cs.Running() {
		l.Seats[r.Name] = true
	}
	reg, err := registry(ctx, ms)
	if err != nil {
		return l, err
	}
	_, entries, err := reg.List(ctx)
	if err != nil {
		return l, fmt.Errorf("reading the channel registry: %w", err)
	}
	l.Reg = entries
	if l.Def, err = reg.Defaults(ctx); err != nil {
		return l, fmt.Errorf("reading the channel defaults: %w", err)
	}
	return l, nil
}

func registry(ctx context.Context, ms Mesh) (*mesh.Registry, error) {
	js, err := jetstream.New(ms.NC)
	if err != nil {
		return nil, err
	}
	reg, err := mesh.OpenRegistry(ctx, js, ms.Paths.Space)
	if err != nil {
		return nil, fmt.Errorf("opening the channel registry: %w", err)
	}
	return reg, nil
}

// Options say which waiting steps to take.
type Options struct {
	Restart bool // take the launch changes (--apply, or the person said yes)
	Prune   bool // stop what the file no longer names (--prune)
	// Progress is told each step as it starts and ends.
	Progress func(s manifest.Step, what string)
}

// Outcome is what an apply did.
type Outcome struct {
	Done    []manifest.Step   `json:"done"`
	Waiting []manifest.Step   `json:"waiting"` // not taken: they wait on the flag they name
	Failed  []Failure         `json:"failed"`
	Creds   map[string]string `json:"creds,omitempty"` // endpoint -> its creds file
}

// Failure is a step that did not complete.
type Failure struct {
	Step  manifest.Step `json:"step"`
	Error string        `json:"error"`
}

// EndpointCreds is where an endpoint's credential is written: under the
// store's creds folder, which no seat can read.
func EndpointCreds(p config.Paths, name string) string {
	return filepath.Join(p.CredsDir(), name+".creds")
}

// Apply takes the plan's steps (all but StartMesh, which the caller has
// done) and records what was applied. A step that fails is reported and
// the rest still run; what it left undone shows in the next plan.
func Apply(ctx context.Context, ms Mesh, m *manifest.Manifest, plan *manifest.Plan, prev *manifest.State, startedMesh bool, o Options) (Outcome, error) {
	out := Outcome{Done: []manifest.Step{}, Waiting: []manifest.Step{}, Failed: []Failure{}, Creds: map[string]string{}}
	declared := map[string]manifest.Resolved{}
	for _, a := range m.Agents {
		declared[a.Name] = a.Resolve()
	}
	// The manager spawns declared seats from this file: written first.
	if err := manifest.WriteDeclared(ms.Paths, declared); err != nil {
		return out, fmt.Errorf("recording the declared agents: %w", err)
	}
	st := &manifest.State{Manifest: m.Path, Space: m.Space, Open: m.Open, StartedMesh: startedMesh || prev != nil && prev.StartedMesh,
		Defaults: m.Defaults, Channels: map[string]mesh.ChannelConfig{}, Agents: map[string]manifest.Resolved{}}
	if prev != nil {
		maps.Copy(st.Agents, prev.Agents)
		maps.Copy(st.Channels, prev.Channels)
	}
	var spawned []pending
	for i, s := range plan.Steps {
		if s.Action == manifest.StartMesh {
			continue
		}
		if s.Needs == manifest.NeedsApply && !o.Restart || s.Needs == manifest.NeedsPrune && !o.Prune {
			out.Waiting = append(out.Waiting, s)
			continue
		}
		tell(o, s, "start")
		var err error
		switch s.Action {
		case manifest.SetDefaults:
			err = setRegistry(ctx, ms, "", m.Defaults)
		case manifest.SetChannel:
			c := channel(m, s.Channel)
			if err = setRegistry(ctx, ms, c.Name, c.Config); err == nil {
				st.Channels[c.Name] = c.Config
			}
		case manifest.Mint:
			var path string
			if path, err = mintEndpoint(ctx, ms, declared[s.Agent]); err == nil {
				out.Creds[s.Agent] = path
				st.Agents[s.Agent] = declared[s.Agent]
			}
		case manifest.Remove:
			if err = remove(ctx, ms, s, prev); err == nil {
				if old, kept := st.Agents[s.Agent]; kept && m.Agent(s.Agent) != nil && old.Kind != config.KindEndpoint {
					old.Seats = declared[s.Agent].Seats // count lowered: the others stay as they were
					st.Agents[s.Agent] = old
				} else {
					delete(st.Agents, s.Agent)
				}
			}
		case manifest.Remint, manifest.Restart:
			if err = stopSeats(ctx, ms, s.Seats); err == nil {
				var ps []pending
				ps, err = spawn(ctx, ms, declared[s.Agent], s.Seats, i)
				spawned = append(spawned, ps...)
			}
		case manifest.Spawn:
			var ps []pending
			ps, err = spawn(ctx, ms, declared[s.Agent], s.Seats, i)
			spawned = append(spawned, ps...)
		}
		if err != nil {
			out.Failed = append(out.Failed, Failure{Step: s, Error: err.Error()})
			tell(o, s, "failed: "+err.Error())
			continue
		}
		if s.Action != manifest.Spawn && s.Action != manifest.Remint && s.Action != manifest.Restart {
			out.Done = append(out.Done, s)
			tell(o, s, "done")
		}
	}
	// Every spawn was accepted above; each is followed to its outcome
	// here, so the seats come up together.
	failedSteps := map[int]string{}
	for _, p := range spawned {
		if err := p.await(ctx, ms); err != nil {
			failedSteps[p.step] = fmt.Sprintf("%s: %v", p.seat, err)
		}
	}
	for i, s := range plan.Steps {
		if s.Action != manifest.Spawn && s.Action != manifest.Remint && s.Action != manifest.Restart {
			continue
		}
		if slices.ContainsFunc(out.Waiting, func(w manifest.Step) bool { return w.Action == s.Action && w.Agent == s.Agent }) ||
			slices.ContainsFunc(out.Failed, func(f Failure) bool { return f.Step.Action == s.Action && f.Step.Agent == s.Agent }) {
			continue
		}
		if why, bad := failedSteps[i]; bad {
			out.Failed = append(out.Failed, Failure{Step: s, Error: why})
			tell(o, s, "failed: "+why)
			continue
		}
		st.Agents[s.Agent] = declared[s.Agent]
		out.Done = append(out.Done, s)
		tell(o, s, "done")
	}
	// An agent with nothing to do holds what the file says of it.
	for _, n := range plan.Unchanged {
		st.Agents[n] = declared[n]
	}
	// Seats waiting for --prune stay on the record, so the next up -f
	// still knows to stop them.
	for _, s := range out.Waiting {
		if a, ok := st.Agents[s.Agent]; ok && s.Action == manifest.Remove && a.Kind != config.KindEndpoint {
			for _, seat := range s.Seats {
				if !slices.Contains(a.Seats, seat) {
					a.Seats = append(slices.Clone(a.Seats), seat)
				}
			}
			st.Agents[s.Agent] = a
		}
	}
	st.AppliedAt = time.Now().UTC()
	if err := manifest.WriteState(ms.Paths, st); err != nil {
		return out, fmt.Errorf("recording what was applied: %w", err)
	}
	return out, nil
}

func tell(o Options, s manifest.Step, what string) {
	if o.Progress != nil {
		o.Progress(s, what)
	}
}

func channel(m *manifest.Manifest, name string) *manifest.Channel {
	for _, c := range m.Channels {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func setRegistry(ctx context.Context, ms Mesh, name string, c mesh.ChannelConfig) error {
	reg, err := registry(ctx, ms)
	if err != nil {
		return err
	}
	_, err = reg.Set(ctx, name, c)
	return err
}

// mintEndpoint mints the endpoint's credential (revoking any earlier one)
// and writes it 0600 where seats cannot read it.
func mintEndpoint(ctx context.Context, ms Mesh, r manifest.Resolved) (string, error) {
	if ms.Open {
		return "", nil
	}
	id := broker.Identity{
		Space: ms.Paths.Space, Principal: wire.Principal{Owner: "local", Actor: r.Name}, Profile: wire.ProfileAgent,
		Role: r.Role, Subscribe: r.Subscribe, AllowSubscribe: r.AllowSubscribe, AllowPublish: r.AllowPublish, Capabilities: r.Capabilities,
	}
	if err := id.Normalize(); err != nil {
		return "", err
	}
	c, _, err := issue.Mint(ctx, ms.Paths, id, ms.NC)
	if err != nil {
		return "", err
	}
	if err := config.EnsureDir(ms.Paths.CredsDir(), 0o700); err != nil {
		return "", err
	}
	path := EndpointCreds(ms.Paths, r.Name)
	return path, broker.WriteCreds(path, c)
}

// remove stops an agent's seats, or revokes an endpoint's credential.
func remove(ctx context.Context, ms Mesh, s manifest.Step, prev *manifest.State) error {
	if prev != nil {
		if old, ok := prev.Agents[s.Agent]; ok && old.Kind == config.KindEndpoint {
			return retire(ctx, ms, s.Agent)
		}
	}
	return stopSeats(ctx, ms, s.Seats)
}

func retire(ctx context.Context, ms Mesh, name string) error {
	if ms.Open {
		return nil
	}
	p := wire.Principal{Owner: "local", Actor: name}
	uids, err := issue.Lifecycles(ms.Paths, p)
	if err != nil {
		return err
	}
	for _, uid := range uids {
		if err := issue.Retire(ctx, ms.Paths, p, uid, ms.NC); err != nil {
			return err
		}
	}
	return nil
}

// stopSeats stops each running seat named; one already gone is no error.
func stopSeats(ctx context.Context, ms Mesh, seats []string) error {
	for _, name := range seats {
		row, err := ms.Seats.Locate(ctx, name, "")
		var none *client.NoSeatError
		if errors.As(err, &none) {
			continue
		}
		if err != nil {
			return fmt.Errorf("finding seat %s: %w", name, err)
		}
		if _, err := ms.Seats.Stop(ctx, row.Seat(), true); err != nil {
			return fmt.Errorf("stopping seat %s: %w", name, err)
		}
	}
	return nil
}

// pending is an accepted spawn not yet followed to its outcome.
type pending struct {
	step int
	seat string
	sp   client.Spawned
}

func spawn(ctx context.Context, ms Mesh, r manifest.Resolved, seats []string, step int) ([]pending, error) {
	var out []pending
	for _, name := range seats {
		sp, err := ms.Seats.Spawn(ctx, client.SpawnArgs{Persona: r.Name, Name: name, Prompt: r.Prompt}, "")
		if err != nil {
			if e := proto.AsError(err); e != nil {
				return out, fmt.Errorf("spawning %s: %s", name, e.Message)
			}
			return out, fmt.Errorf("spawning %s: %w", name, err)
		}
		out = append(out, pending{step: step, seat: name, sp: sp})
	}
	return out, nil
}

func (p pending) await(ctx context.Context, ms Mesh) error {
	actx, cancel := context.WithTimeout(ctx, p.sp.Deadline()+10*time.Second)
	defer cancel()
	res, err := ms.Seats.AwaitSpawn(actx, p.sp, client.Watch{})
	if err != nil {
		return fmt.Errorf("no outcome within %s; see `cotal ps` and `cotal screen %s`", p.sp.Deadline()+10*time.Second, p.seat)
	}
	switch res.State {
	case ep.GoalSucceeded:
		return nil
	case ep.GoalUncertain:
		return fmt.Errorf("did not show it was up within the bound; it is kept running: see `cotal screen %s`", p.seat)
	}
	if res.Error != nil {
		return errors.New(res.Error.Message)
	}
	return fmt.Errorf("spawn %s", res.State)
}

// Down stops what the applied state started: the declared seats that run
// and the endpoints' credentials, and forgets the state. It never touches
// a seat the file did not declare.
func Down(ctx context.Context, ms Mesh, st *manifest.State) ([]string, error) {
	var stopped []string
	live, err := Live(ctx, ms)
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(st.Agents)) {
		a := st.Agents[name]
		if a.Kind == config.KindEndpoint {
			if err := retire(ctx, ms, name); err != nil {
				return stopped, fmt.Errorf("revoking %s's credential: %w", name, err)
			}
			continue
		}
		for _, s := range a.Seats {
			if !live.Seats[s] {
				continue
			}
			if err := stopSeats(ctx, ms, []string{s}); err != nil {
				return stopped, err
			}
			stopped = append(stopped, s)
		}
	}
	return stopped, manifest.RemoveState(ms.Paths)
}

// Plan is what up -f would do on the mesh of p: ms is the running mesh,
// nil when none runs. It also returns what was applied.
func Plan(ctx context.Context, p config.Paths, ms *Mesh, m *manifest.Manifest) (*manifest.Plan, *manifest.State, error) {
	prev, err := manifest.ReadState(p)
	if err != nil {
		return nil, nil, err
	}
	var live manifest.Live
	if ms != nil {
		if live, err = Live(ctx, *ms); err != nil {
			return nil, nil, err
		}
	}
	plan, err := manifest.MakePlan(m, prev, live)
	return plan, prev, err
}

// Up plans and applies the plan. A launch change is taken when o.Restart
// is set or confirm (when set) says yes to the plan.
func Up(ctx context.Context, ms Mesh, m *manifest.Manifest, startedMesh bool, o Options, confirm func(*manifest.Plan) bool) (*manifest.Plan, Outcome, error) {
	unlock, err := lock(ms.Paths)
	if err != nil {
		return nil, Outcome{}, err
	}
	defer unlock()
	plan, prev, err := Plan(ctx, ms.Paths, &ms, m)
	if err != nil {
		return nil, Outcome{}, err
	}
	if !o.Restart && confirm != nil && slices.ContainsFunc(plan.Steps, func(s manifest.Step) bool { return s.Action == manifest.Restart }) {
		o.Restart = confirm(plan)
	}
	out, err := Apply(ctx, ms, m, plan, prev, startedMesh, o)
	return plan, out, err
}

// Stopped is what DownFile did.
type Stopped struct {
	Seats []string `json:"seatsStopped"`
	// Mesh says the mesh may stop too: up -f started it and no seat the
	// file did not declare runs on it. Kept says why not, when not.
	Mesh bool   `json:"-"`
	Kept string `json:"kept,omitempty"`
}

// DownFile stops what st started (Down) and says whether the mesh may
// stop as well.
func DownFile(ctx context.Context, ms Mesh, st *manifest.State) (Stopped, error) {
	var r Stopped
	unlock, err := lock(ms.Paths)
	if err != nil {
		return r, err
	}
	defer unlock()
	if r.Seats, err = Down(ctx, ms, st); err != nil {
		return r, err
	}
	if !st.StartedMesh {
		r.Kept = "up -f did not start it"
		return r, nil
	}
	live, err := Live(ctx, ms)
	if err != nil {
		r.Kept = fmt.Sprintf("cannot tell whether other seats run (%v)", err)
		return r, nil
	}
	if len(live.Seats) > 0 {
		r.Kept = fmt.Sprintf("%d seat(s) the file did not start still run: %s", len(live.Seats), strings.Join(slices.Sorted(maps.Keys(live.Seats)), ", "))
		return r, nil
	}
	r.Mesh = true
	return r, nil
}

// Held are the rights of every agent credential the space holds
// unrevoked, by name: a name held by several lifecycles has all of theirs.
func Held(p config.Paths) (map[string]manifest.Rights, error) {
	ids, err := issue.Unrevoked(p)
	if err != nil {
		return nil, err
	}
	held := map[string]manifest.Rights{}
	for _, id := range ids {
		if id.Profile != wire.ProfileAgent {
			continue
		}
		h := held[id.Principal.Actor]
		for _, c := range id.AllowSubscribe {
			if !slices.Contains(h.Read, c) {
				h.Read = append(h.Read, c)
			}
		}
		for _, c := range id.AllowPublish {
			if !slices.Contains(h.Post, c) {
				h.Post = append(h.Post, c)
			}
		}
		h.Read, h.Post = nonNil(h.Read), nonNil(h.Post)
		held[id.Principal.Actor] = h
	}
	return held, nil
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
