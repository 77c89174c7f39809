package manifest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/mesh"
)

// applied is the state up -f leaves after applying m.
func applied(m *Manifest) *State {
	s := &State{Manifest: m.Path, Space: m.Space, AppliedAt: time.Now(), Defaults: m.Defaults,
		Channels: map[string]mesh.ChannelConfig{}, Agents: map[string]Resolved{}}
	for _, c := range m.Channels {
		s.Channels[c.Name] = c.Config
	}
	for _, a := range m.Agents {
		s.Agents[a.Name] = a.Resolve()
	}
	return s
}

func steps(p *Plan) []string {
	var out []string
	for _, s := range p.Steps {
		out = append(out, string(s.Action)+" "+s.Agent+s.Channel+" "+strings.Join(s.Seats, ",")+" "+s.Needs)
	}
	return out
}

func TestPlanOnAStoppedMeshStartsEverything(t *testing.T) {
	m, err := Load(project(t, three, map[string]string{"lead": leadFile}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := MakePlan(m, nil, Live{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"start-mesh   ", "set-defaults   ", "set-channel general  ", "set-channel review  ",
		"spawn bot bot ", "spawn coder coder_1,coder_2 ", "spawn lead lead "}
	if got := steps(p); !slices.Equal(got, want) {
		t.Fatalf("steps:\n%q\nwant\n%q", got, want)
	}
}

func TestPlanAppliesOnlyTheDifference(t *testing.T) {
	ag := map[string]string{"lead": leadFile}
	m1, err := Load(project(t, three, ag))
	if err != nil {
		t.Fatal(err)
	}
	// bot loses posting on review; coder runs another model; lead is gone.
	y := strings.Replace(three, "allowPublish: [bot, coder]", "allowPublish: [coder]", 1)
	y = strings.Replace(y, "model: sonnet", "model: opus", 1)
	y = strings.Replace(y, "  lead: lead\n", "", 1)
	y = strings.ReplaceAll(y, "[lead, coder]", "[coder]")
	y = strings.Replace(y, "allowPublish: [lead]", "allowPublish: []", 1)
	m2, err := Load(project(t, y, ag))
	if err != nil {
		t.Fatal(err)
	}
	reg := map[string]mesh.ChannelConfig{}
	for _, c := range m1.Channels {
		reg[c.Name] = c.Config
	}
	live := Live{Running: true, Seats: map[string]bool{"bot": true, "coder_1": true, "coder_2": true, "lead": true}, Reg: reg, Def: &m1.Defaults}
	p, err := MakePlan(m2, applied(m1), live)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"remove lead lead --prune", "remint bot bot ", "restart coder coder_1,coder_2 --apply"}
	if got := steps(p); !slices.Equal(got, want) {
		t.Fatalf("steps:\n%q\nwant\n%q\n%s", got, want, p.Text())
	}
	if ch := p.Steps[1].Changes; len(ch) != 1 || ch[0] != "allowPublish: [review] -> []" {
		t.Errorf("remint changes: %q", ch)
	}
	if !p.Empty() == false {
		t.Error("a plan with a re-mint is not empty")
	}
	// The same file again, everything running: nothing to do.
	p, err = MakePlan(m1, applied(m1), live)
	if err != nil || len(p.Steps) != 0 || len(p.Unchanged) != 3 {
		t.Fatalf("plan of the applied file: %v\n%s", err, p.Text())
	}
	// A declared seat that stopped is spawned again.
	delete(live.Seats, "coder_2")
	p, _ = MakePlan(m1, applied(m1), live)
	if got := steps(p); !slices.Equal(got, []string{"spawn coder coder_2 "}) {
		t.Fatalf("after a seat stopped: %q", got)
	}
	// A mesh running in the other mode is refused.
	live.Open = true
	if _, err := MakePlan(m1, applied(m1), live); err == nil || !strings.Contains(err.Error(), "runs open") {
		t.Fatalf("mode mismatch: %v", err)
	}
}

func TestTopologyNamesWhereFileAndMeshDiffer(t *testing.T) {
	m, err := Load(project(t, three, map[string]string{"lead": leadFile}))
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]Rights{
		"lead":    {Read: []string{"general"}, Post: []string{"general"}},
		"coder_1": {Read: []string{"general"}, Post: []string{"review", "general"}}, // one right too many
		"alice":   {Read: []string{">"}},
	}
	var got []string
	for _, r := range Topology(m, held) {
		got = append(got, r.Who+" "+r.State)
	}
	want := []string{"bot not running", "coder_1 differs", "coder_2 not running", "lead same", "alice not in the file"}
	if !slices.Equal(got, want) {
		t.Fatalf("topology: %q, want %q", got, want)
	}
}

// TestLoweringACountStopsOnlyTheSeatsDropped: count: 2 to count: 1 keeps
// coder_1 as it runs and removes coder_2 (with --prune); it used to name
// the one seat left "coder", so the plan stopped both and started a third.
func TestLoweringACountStopsOnlyTheSeatsDropped(t *testing.T) {
	ag := map[string]string{"lead": leadFile}
	m2, err := Load(project(t, three, ag))
	if err != nil {
		t.Fatal(err)
	}
	m1, err := Load(project(t, strings.Replace(three, "count: 2", "count: 1", 1), ag))
	if err != nil {
		t.Fatal(err)
	}
	if got := m1.Agent("coder").Seats(); !slices.Equal(got, []string{"coder_1"}) {
		t.Fatalf("count: 1 names %q, want coder_1", got)
	}
	reg := map[string]mesh.ChannelConfig{}
	for _, c := range m2.Channels {
		reg[c.Name] = c.Config
	}
	live := Live{Running: true, Seats: map[string]bool{"bot": true, "coder_1": true, "coder_2": true, "lead": true}, Reg: reg, Def: &m2.Defaults}
	p, err := MakePlan(m1, applied(m2), live)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := steps(p), []string{"remove coder coder_2 --prune"}; !slices.Equal(got, want) {
		t.Fatalf("lowering the count: %q, want %q\n%s", got, want, p.Text())
	}
	// And raising it again starts only the seat added.
	delete(live.Seats, "coder_2")
	p, err = MakePlan(m2, applied(m1), live)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := steps(p), []string{"spawn coder coder_2 "}; !slices.Equal(got, want) {
		t.Fatalf("raising the count: %q, want %q\n%s", got, want, p.Text())
	}
}
