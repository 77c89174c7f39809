package tui

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat/attach/tty"
	"github.com/cotal-go/cotal/seat/client"
)

// Managers is the dashboard's way to the managers over seat/client: the
// census, screens and seat commands, as whoever dial connects as (the
// local operator). It is a SeatSource and a SeatControl. The client is
// dialled on first use and again once its connection has closed; mu
// guards it.
type Managers struct {
	dial     func() (*client.Client, error)
	personas func(context.Context) ([]client.PersonaChoice, error)
	spawnOn  string
	changed  chan struct{}
	declared func() []string

	mu     sync.Mutex
	c      *client.Client
	closed bool
}

// NewManagers reaches the managers through the clients dial makes (it
// owns their connections from then on). personas lists what a spawn may
// use; spawns go to the manager instance spawnOn, or any when "".
func NewManagers(dial func() (*client.Client, error), personas func(context.Context) ([]client.PersonaChoice, error), spawnOn string) *Managers {
	return &Managers{dial: dial, personas: personas, spawnOn: spawnOn, changed: make(chan struct{}, 1)}
}

// SetDeclared names where a census reads the seats the space's manifest
// declares; set before the dashboard runs.
func (d *Managers) SetDeclared(f func() []string) { d.declared = f }

// Close closes the client's connection; later calls fail.
func (d *Managers) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.c != nil {
		d.c.EP().Conn().Close()
	}
}

func (d *Managers) client() (*client.Client, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errors.New("the dashboard is closing")
	}
	if d.c != nil && !d.c.EP().Conn().IsClosed() {
		return d.c, nil
	}
	c, err := d.dial()
	if err != nil {
		return nil, err
	}
	d.c = c
	return c, nil
}

// poke asks the collector for a census now, after a command changed one.
func (d *Managers) poke() {
	select {
	case d.changed <- struct{}{}:
	default:
	}
}

// Changes signals after each command that changed the seats.
func (d *Managers) Changes() <-chan struct{} { return d.changed }

// Seats takes a census over every manager; none registered is no seats.
func (d *Managers) Seats(ctx context.Context) (Census, error) {
	c, err := d.client()
	if err != nil {
		return Census{}, err
	}
	cs, err := c.Census(ctx, "")
	if client.IsNoManager(err) {
		return Census{}, nil
	}
	if err != nil {
		return Census{}, err
	}
	out := Census{Managers: len(cs.Managers)}
	if d.declared != nil {
		out.Declared = d.declared()
	}
	for _, m := range cs.Missing {
		out.Missing = append(out.Missing, m.InstanceID)
	}
	for _, m := range cs.Failed {
		out.Missing = append(out.Missing, m.InstanceID)
	}
	now := time.Now().UnixMilli()
	for _, r := range cs.Rows {
		out.Seats = append(out.Seats, seatOfRow(r, now-r.ManagerNowMs))
	}
	return out, nil
}

// seatOfRow reads a ps row on this clock: skew is our clock minus the
// manager's, so the ages the dashboard prints are the manager's.
func seatOfRow(r client.CensusRow, skew int64) Seat {
	at := func(ms int64) time.Time {
		if ms == 0 {
			return time.Time{}
		}
		return time.UnixMilli(ms + skew)
	}
	var attached []string
	for _, a := range r.Sessions {
		attached = append(attached, a.Holder)
	}
	s := Seat{
		Name: r.Name, UID: r.LifecycleUID, PeerID: r.ID, Manager: r.Manager, Persona: r.Persona, Harness: r.Harness,
		State: r.State, Process: r.Process, PID: r.PID, Started: at(r.StartedMs), Exited: at(r.ExitedMs),
		LastOutput: at(r.LastOutputMs), Mesh: r.Mesh, MeshSince: at(r.MeshSinceMs), Activity: r.Activity,
		Sandbox: r.Sandbox, Attached: attached, Stopped: r.Stopped,
		Held: r.Held, Waiting: r.Waiting, OldestWaiting: at(r.OldestWaitingMs), Suspended: at(r.SuspendedMs),
		PullOnly: r.PullOnly, Injects: r.Injects, Reattached: at(r.ReattachedMs), Lost: at(r.LostMs), LostWhy: r.Lost,
		Resumed: at(r.ResumedMs), ResumedFrom: r.ResumedFrom,
	}
	s.Usage, s.Worktree = r.Usage, r.Worktree
	if r.Usage != nil {
		s.LastAnswer = at(r.Usage.LastAnswerMs)
	}
	if a := r.Agent; a != nil {
		s.Agent, s.Asks, s.AsksSince, s.Answerable = a.State, a.Asks, at(a.SinceMs), a.Answerable
	}
	return s
}

// at addresses a census seat as the operator.
func at(s Seat) client.Seat { return client.Seat{Name: s.Name, Manager: s.Manager} }

// Screen is the seat's screen from its manager.
func (d *Managers) Screen(ctx context.Context, s Seat) (Screen, error) {
	c, err := d.client()
	if err != nil {
		return Screen{}, err
	}
	r, err := c.Screen(ctx, at(s))
	if err != nil {
		return Screen{}, err
	}
	return Screen{Text: r.Screen, Running: r.Running}, nil
}

// Personas names the personas a spawn may use.
func (d *Managers) Personas(ctx context.Context) ([]client.PersonaChoice, error) {
	return d.personas(ctx)
}

// Spawn asks the manager for a seat of persona.
func (d *Managers) Spawn(ctx context.Context, persona string) (SpawnTicket, error) {
	c, err := d.client()
	if err != nil {
		return SpawnTicket{}, err
	}
	sp, err := c.Spawn(ctx, client.SpawnArgs{Persona: persona}, d.spawnOn)
	if err != nil {
		return SpawnTicket{}, err
	}
	d.poke()
	return SpawnTicket{Persona: persona, Name: sp.Name, Manager: sp.Manager, GoalID: sp.GoalID, Deadline: sp.Deadline()}, nil
}

// AwaitSpawn follows the spawn to its outcome, as `cotal spawn` does.
func (d *Managers) AwaitSpawn(ctx context.Context, t SpawnTicket) (SpawnOutcome, error) {
	defer d.poke()
	c, err := d.client()
	if err != nil {
		return SpawnOutcome{}, err
	}
	sp := client.Spawned{SpawnAccepted: client.SpawnAccepted{Name: t.Name, GoalID: t.GoalID}, Manager: t.Manager}
	res, err := c.AwaitSpawn(ctx, sp, client.Watch{})
	if err != nil {
		return SpawnOutcome{}, err
	}
	o := SpawnOutcome{State: SpawnFailed}
	switch res.State {
	case ep.GoalSucceeded:
		o.State = SpawnSucceeded
	case ep.GoalUncertain:
		o.State = SpawnUncertain
		var d struct {
			Reason string `json:"reason"`
		}
		if json.Unmarshal(res.Data, &d) == nil {
			o.Message = d.Reason
		}
	default:
		o.Message = res.State
		if res.Error != nil {
			o.Message = res.Error.Message
		}
	}
	return o, nil
}

// Stop stops the seat gracefully and returns how its process ended.
func (d *Managers) Stop(ctx context.Context, s Seat) (string, error) {
	c, err := d.client()
	if err != nil {
		return "", err
	}
	r, err := c.Stop(ctx, at(s), true)
	if err != nil {
		return "", err
	}
	d.poke()
	return r.Process, nil
}

// Input types text and Enter into the seat.
func (d *Managers) Input(ctx context.Context, s Seat, text string) (int, error) {
	c, err := d.client()
	if err != nil {
		return 0, err
	}
	r, err := c.Input(ctx, at(s), text, true)
	if err != nil {
		return 0, err
	}
	d.poke()
	return r.Bytes, nil
}

// Answer answers what the seat waits on through its harness's hook.
func (d *Managers) Answer(ctx context.Context, s Seat, decision string) (string, error) {
	c, err := d.client()
	if err != nil {
		return "", err
	}
	r, err := c.Answer(ctx, at(s), decision, "")
	if err != nil {
		return "", err
	}
	d.poke()
	return r.Asked, nil
}

// Sessions opens attach sessions on the seat's current lifecycle as the
// operator, dialling again once the connection has closed.
func (d *Managers) Sessions(s Seat) tty.Open {
	return tty.SeatOpener(func() (*client.Client, error) {
		c, err := d.client()
		if err == nil {
			d.poke() // the census shows the session
		}
		return c, err
	}, at(s), s.UID)
}
