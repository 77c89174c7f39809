package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// spawnWait bounds how long cotal_spawn follows a spawn to its outcome
// within one tool call (toolTimeout); past it the answer says the spawn
// was accepted and how to see it come up.
const spawnWait = 20 * time.Second

type spawnArgs struct {
	Name   string `json:"name" schema:"minLength=1,maxLength=128" desc:"the persona to start: the name of an agent file of the mesh's project (cotal_personas lists them); the seat is named after it, numbered when the name is taken (name_2)"`
	Role   string `json:"role,omitempty" schema:"maxLength=64" desc:"the role the seat serves, instead of the persona's"`
	Cwd    string `json:"cwd,omitempty" schema:"maxLength=4096" desc:"the seat's working directory, instead of the persona's"`
	Prompt string `json:"prompt,omitempty" schema:"maxLength=65536" desc:"the first prompt for the seat's agent"`
}

type despawnArgs struct {
	Name     string `json:"name,omitempty" schema:"maxLength=64" desc:"the seat to stop: one you spawned; without name, your own seat (this session ends)"`
	Graceful *bool  `json:"graceful,omitempty" desc:"false: kill it at once; default: SIGTERM, then SIGKILL after 3 s"`
}

type personasArgs struct {
	Name string `json:"name,omitempty" schema:"maxLength=128" desc:"show only this persona"`
}

// newManagers is a manager client acting as the endpoint's identity, over
// its connection: for an agent, one that finds seats on the roster and
// addresses the ones it spawned in owner mode. One per dialled endpoint,
// so a spawn's progress is followed on one subscription.
func newManagers(e *mesh.Endpoint) (*client.Client, error) {
	c, err := e.Control()
	if err != nil {
		return nil, err
	}
	if e.State().Profile.ReadsStorage() {
		return client.New(c), nil
	}
	return client.New(c, client.AsAgent(func(ctx context.Context) ([]presence.Peer, error) {
		peers, _, err := e.Roster(ctx)
		return peers, err
	})), nil
}

// managers is the session's manager client.
func (ss *session) managers() (*client.Client, error) {
	if ss.mgr == nil {
		return nil, errors.New("no manager client on this connection")
	}
	return ss.mgr, nil
}

// controlRefusal says a manager call's failure the way the model reads
// it: no capability, not its seat, or no manager, and whether it ran.
func controlRefusal(verb string, err error) error {
	var none *client.NoSeatError
	if errors.As(err, &none) {
		return refusef("Couldn't %s: %v. You can only %s seats on the roster that you spawned.", verb, err, verb)
	}
	e := proto.AsError(err)
	if e == nil {
		return refusef("Couldn't %s: %v", verb, err)
	}
	switch {
	case e.Code == proto.CodePermissionDenied && strings.Contains(e.Message, "broker refused"):
		return refusef("This session isn't allowed to %s: its persona needs capabilities: [spawn] (the broker refused the request; nothing was done).", verb)
	case e.Code == proto.CodePermissionDenied:
		return refusef("Couldn't %s: %s (nothing was done).", verb, e.Message)
	case e.Code == proto.CodeUnavailable && e.EffectiveOutcome() == proto.NotExecuted:
		return refusef("Couldn't %s: no manager reachable (%s).", verb, e.Message)
	}
	did := ""
	switch e.EffectiveOutcome() {
	case proto.NotExecuted:
		did = " Nothing was done."
	case proto.Unknown:
		did = " It is unknown whether it was done: look at cotal_roster before trying again."
	}
	return refusef("Couldn't %s: %s: %s.%s", verb, e.Code, e.Message, did)
}

func toolSpawn(ctx context.Context, _ *Server, ss *session, a spawnArgs) (string, error) {
	mgr, err := ss.managers()
	if err != nil {
		return "", couldnt("spawn", err)
	}
	sp, err := mgr.Spawn(ctx, client.SpawnArgs{Persona: strings.TrimSpace(a.Name), Role: a.Role, Cwd: a.Cwd, Prompt: a.Prompt}, "")
	if err != nil {
		return "", controlRefusal("spawn", err)
	}
	head := fmt.Sprintf("Spawning %s (persona %s, id %s.%s) on manager %s.", sp.Name, a.Name, sp.Owner, sp.Actor, sp.Manager)
	wctx, cancel := context.WithTimeout(ctx, min(sp.Deadline()+2*time.Second, spawnWait))
	defer cancel()
	res, err := mgr.AwaitSpawn(wctx, sp, client.Watch{})
	if err != nil {
		return head + fmt.Sprintf(" It was accepted and is still coming up (it has %s): it is up once it shows on cotal_roster. Do not spawn it again.", sp.Deadline()), nil
	}
	switch res.State {
	case ep.GoalSucceeded:
		return head + " It is up and on the mesh: reach it with cotal_dm " + sp.Name + ".", nil
	case ep.GoalUncertain:
		return head + " Uncertain: it did not show it was up within its readiness bound; it is kept running. Look for it on cotal_roster rather than spawning it again.", nil
	}
	why := string(res.State)
	if res.Error != nil {
		why += ": " + res.Error.Message
	}
	return "", refusef("%s It did not come up (%s).", head, why)
}

func toolDespawn(ctx context.Context, _ *Server, ss *session, a despawnArgs) (string, error) {
	graceful := a.Graceful == nil || *a.Graceful
	if strings.TrimSpace(a.Name) == "" {
		return despawnSelf(ctx, ss, graceful)
	}
	mgr, err := ss.managers()
	if err != nil {
		return "", couldnt(fmt.Sprintf("despawn %s", a.Name), err)
	}
	row, err := mgr.Locate(ctx, strings.TrimSpace(a.Name), "")
	if err != nil {
		return "", controlRefusal("despawn", err)
	}
	r, err := mgr.Stop(ctx, row.Seat(), graceful)
	if err != nil {
		return "", controlRefusal("despawn", err)
	}
	return fmt.Sprintf("Stopped %s (%s); it is offline.", r.Name, r.Process), nil
}

// despawnSelf stops the caller's own seat through its connector: the
// manager answers, then stops it, which ends this session.
func despawnSelf(ctx context.Context, ss *session, graceful bool) (string, error) {
	sc, ok := ss.c.(*seatConnector)
	if !ok {
		return "", refusef("Couldn't despawn yourself: you are not a seat (no manager runs this session); end your session yourself, or name the seat to stop.")
	}
	var r client.StopReply
	if err := sc.call(ctx, wire.ManagerStop, client.StopArgs{Graceful: &graceful}, &r); err != nil {
		return "", refusef("Couldn't despawn yourself: %v", err)
	}
	return "Stopping your seat " + r.Name + " now: this session ends.", nil
}

func toolPersonas(ctx context.Context, _ *Server, ss *session, a personasArgs) (string, error) {
	mgr, err := ss.managers()
	if err != nil {
		return "", couldnt("list the personas", err)
	}
	r, err := mgr.Personas(ctx, strings.TrimSpace(a.Name), "")
	if err != nil {
		return "", controlRefusal("list personas", err)
	}
	return personasText(r.Personas), nil
}

// personasText is the personas one line each, their lists after.
func personasText(ps []client.PersonaInfo) string {
	if len(ps) == 0 {
		return "The mesh's project has no personas (.cotal/agents/<name>.md)."
	}
	var b strings.Builder
	b.WriteString("Personas you can spawn (cotal_spawn name=<persona>):\n")
	for _, p := range ps {
		line := "- " + cleanLine(p.Name)
		if p.Role != "" {
			line += "/" + cleanLine(p.Role)
		}
		line += " (" + cleanLine(p.Harness) + ")"
		if p.Description != "" {
			line += ": " + cleanLine(p.Description)
		}
		b.WriteString(line + "\n")
		var facts []string
		if len(p.Capabilities) > 0 {
			facts = append(facts, "capabilities "+strings.Join(p.Capabilities, ", "))
		}
		facts = append(facts, "joins "+aclText(p.Subscribe), "reads "+aclText(p.AllowSubscribe), "posts "+aclText(p.AllowPublish))
		b.WriteString("  " + strings.Join(facts, "; ") + "\n")
		if p.Error != "" {
			b.WriteString("  would not start now: " + cleanLine(p.Error) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// cleanLine keeps a persona field on its line: an agent file is the
// project's, but its text still reaches a model.
func cleanLine(s string) string { return wire.CleanLabel(s) }
