package client

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// How AwaitSpawn polls for a spawn's outcome.
const (
	awaitEvery    = 150 * time.Millisecond
	awaitAgain    = 5 * time.Millisecond // after a progress event: the outcome follows its ready step
	resultTimeout = 5 * time.Second      // one goal-result call
)

// Spawned is an accepted spawn: the seat it will be and the manager that
// runs it and keeps its goal.
type Spawned struct {
	SpawnAccepted
	Manager string          // the instance that accepted
	Reply   json.RawMessage // the acceptance as the manager sent it
	since   uint64          // the progress log's length before the request
}

// Owned addresses the spawned seat in owner mode, as its spawner.
func (s Spawned) Owned() Seat {
	return Seat{Name: s.Name, Manager: s.Manager, Owner: s.Owner, UID: s.UID}
}

// Deadline is the readiness bound the manager set: past it an outcome
// that is not yet written will be uncertain.
func (s Spawned) Deadline() time.Duration {
	return time.Duration(s.ReadinessDeadlineMs) * time.Millisecond
}

// Spawn asks a manager (the instance on, or any) to start a seat and
// returns once it accepted; AwaitSpawn follows it to its outcome. The
// spawn's progress events are kept from before the request on, so none
// is missed.
func (c *Client) Spawn(ctx context.Context, a SpawnArgs, on string) (Spawned, error) {
	since := c.follow()
	var opts []ep.CallOption
	if on != "" {
		opts = append(opts, ep.On(on))
	}
	var acc SpawnAccepted
	r, err := c.call(ctx, wire.ManagerSpawn, a, &acc, opts...)
	if err != nil {
		return Spawned{}, err
	}
	return Spawned{SpawnAccepted: acc, Manager: r.Responder.InstanceID, Reply: r.Data, since: since}, nil
}

// Step is one progress event of a spawn: Step is StepLaunched (with the
// seat's PID) or StepReady; State is the goal's state word.
type Step struct {
	State string
	Step  string
	PID   int
}

// Watch is what AwaitSpawn tells on the way to the outcome; nil fields are
// not called. Both run on AwaitSpawn's goroutine.
type Watch struct {
	Step    func(Step) // each progress event of the spawn, in order
	Pending func()     // once, when the first look found no outcome yet
}

// AwaitSpawn follows an accepted spawn until its goal has its one outcome
// (succeeded, failed or uncertain) and returns it. It asks as the caller
// that spawned, on the manager that accepted; a look that fails is tried
// again until ctx ends, which is the only error. It looks again at each
// progress event it follows (the outcome comes just after the ready
// step), else every awaitEvery.
func (c *Client) AwaitSpawn(ctx context.Context, s Spawned, w Watch) (ep.GoalResult, error) {
	cursor := s.since
	steps := func() {
		for _, p := range c.progressOf(&cursor, s.GoalID) {
			if w.Step != nil {
				w.Step(stepOf(p))
			}
		}
	}
	pending, woke := false, false
	for {
		changed := c.progressChanged()
		steps()
		res, ok, err := c.ep.GoalResult(ctx, wire.ManagerEndpoint, s.GoalID, ep.On(s.Manager), ep.Timeout(resultTimeout))
		if err == nil && ok {
			steps() // those that came in while the outcome was read
			return res, nil
		}
		if ctx.Err() != nil {
			return ep.GoalResult{}, fmt.Errorf("waiting for %s to come up: %w", s.Name, ctx.Err())
		}
		if !pending {
			pending = true
			if w.Pending != nil {
				w.Pending()
			}
		}
		wait := awaitEvery
		if woke {
			wait = awaitAgain
		}
		woke = false
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		case <-changed:
			woke = true
		}
	}
}

// progressChanged is closed at the next progress event the client
// follows; nil (never) when it follows none.
func (c *Client) progressChanged() <-chan struct{} {
	c.mu.Lock()
	l := c.progress
	c.mu.Unlock()
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

func stepOf(p ep.GoalProgress) Step {
	var d SpawnProgress
	if json.Unmarshal(p.Data, &d) != nil {
		return Step{State: p.State} // progress of no step: only its state says anything
	}
	return Step{State: p.State, Step: d.Step, PID: d.PID}
}

// progressKeep bounds the progress log: a spawn followed later than this
// many events of the caller's other goals loses its oldest steps, never
// its outcome.
const progressKeep = 256

// progressLog is every goal progress event of the client's caller since
// its first spawn, the last progressKeep of them. Events are numbered from
// 0 in arrival order; mu guards the fields.
type progressLog struct {
	mu      sync.Mutex
	events  []ep.GoalProgress // events[i] is number next-len(events)+i
	next    uint64
	changed chan struct{} // closed (and dropped) at the next event; nil until someone waits
}

// follow subscribes to the caller's goal progress on first use and returns
// the number the next event will have. Without the subscription (the
// broker refused it) spawns are followed without steps, as before.
func (c *Client) follow() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.progress == nil {
		l := &progressLog{}
		c.progress = l
		if filter, err := proto.GoalProgressFilter(c.ep.Space(), wire.ManagerEndpoint, c.ep.Caller()); err == nil {
			nc := c.ep.Conn()
			if _, err := nc.Subscribe(filter, l.add); err == nil {
				_ = nc.Flush() // the interest is in place before the spawn is sent
			}
		}
	}
	return c.progress.len()
}

func (l *progressLog) add(m *nats.Msg) {
	var p ep.GoalProgress
	if json.Unmarshal(m.Data, &p) != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, p)
	l.next++
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	if len(l.events) > progressKeep {
		l.events = append(l.events[:0:0], l.events[len(l.events)-progressKeep:]...)
	}
}

func (l *progressLog) len() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// progressOf returns the events of goal numbered from *cursor on, and moves
// the cursor past every event seen.
func (c *Client) progressOf(cursor *uint64, goal string) []ep.GoalProgress {
	c.mu.Lock()
	l := c.progress
	c.mu.Unlock()
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.next - uint64(len(l.events))
	var out []ep.GoalProgress
	for n := max(*cursor, first); n < l.next; n++ {
		if p := l.events[n-first]; p.GoalID == goal {
			out = append(out, p)
		}
	}
	*cursor = l.next
	return out
}
