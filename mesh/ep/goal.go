package ep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/cotal-go/cotal/mesh/wire"
)

// The goal states of spec §6; the last five are terminal and immutable.
const (
	GoalAccepted  = "accepted"
	GoalRejected  = "rejected" // recorded on the bind fact only: the goal never started
	GoalRunning   = "running"
	GoalSucceeded = "succeeded"
	GoalFailed    = "failed"
	GoalCancelled = "cancelled"
	GoalExpired   = "expired"
	GoalUncertain = "uncertain"
)

// TerminalGoalState reports whether state is one of the five outcomes.
func TerminalGoalState(state string) bool {
	switch state {
	case GoalSucceeded, GoalFailed, GoalCancelled, GoalExpired, GoalUncertain:
		return true
	}
	return false
}

// ErrGoalTerminal is returned by Goal.Finish when the goal already has its terminal fact: the first one wins, this one was not written.
var ErrGoalTerminal = errors.New("goal already terminal")

// Executor names the incarnation that accepted a goal.
type Executor struct {
	InstanceID string `json:"instanceId"`
	Epoch      uint64 `json:"epoch"`
}

// GoalBinding is the create-only fact epf.<e>.goal.<cO>.<cA>.<cUid>.<goalId>.bind: the goal's acceptance or rejection, durable before the reply.
type GoalBinding struct {
	GoalID              string       `json:"goalId"`
	Fingerprint         string       `json:"fingerprint"`
	State               string       `json:"state"` // accepted or rejected
	Executor            Executor     `json:"executor"`
	ReadinessDeadlineMs int64        `json:"readinessDeadlineMs,omitempty"`
	Error               *proto.Error `json:"error,omitempty"`
	At                  time.Time    `json:"at"`
}

// GoalResult is the one create-only terminal fact epf.<e>.goal.<cO>.<cA>.<cUid>.<goalId>.result.
type GoalResult struct {
	GoalID      string          `json:"goalId"`
	Fingerprint string          `json:"fingerprint"`
	State       string          `json:"state"`
	Data        json.RawMessage `json:"data,omitempty"`
	Error       *proto.Error    `json:"error,omitempty"`
	Executor    Executor        `json:"executor"`
	At          time.Time       `json:"at"`
}

// GoalProgress is one progress event on epe.<e>.<iid>.<epoch>.goal.….<goalId>.progress.
type GoalProgress struct {
	GoalID string          `json:"goalId"`
	State  string          `json:"state"` // running, waiting or cancelling
	Data   json.RawMessage `json:"data,omitempty"`
	At     time.Time       `json:"at"`
}

// GoalOptions shape an acceptance.
type GoalOptions struct {
	// Readiness is the acceptance-relative bound, separate from the call deadline: missed, the goal ends uncertain. Zero is no bound.
	Readiness time.Duration
}

// Goal is an accepted goal on the server side. Its methods are safe for concurrent use.
type Goal struct {
	s       *Server
	caller  proto.Caller
	id, fp  string
	binding GoalBinding
	timer   *time.Timer
	once    sync.Once
}

// ID is the goal id; Fingerprint the request fingerprint it was accepted under; Binding the acceptance fact.
func (g *Goal) ID() string { return g.id }

// Fingerprint is the §5 fingerprint of the accepting request.
func (g *Goal) Fingerprint() string { return g.fp }

// Binding is the acceptance as recorded.
func (g *Goal) Binding() GoalBinding { return g.binding }

func (c *Call) goalID() string {
	if c.Request.GoalID != "" {
		return c.Request.GoalID
	}
	return c.Request.ID // the ref manager uses the request id
}

func (c *Call) bindSubject() (string, error) {
	topic, err := proto.GoalTopic(c.Caller(), c.goalID())
	if err != nil {
		return "", err
	}
	return proto.FactSubject(c.server.opts.Space, c.server.opts.Endpoint, append(topic, "bind")...)
}

// AcceptGoal records the acceptance create-only before the caller is answered. A goal id already accepted under the same fingerprint returns that goal with again=true (answer it the same way, do not run it twice); under another fingerprint it is a conflict.
func (c *Call) AcceptGoal(ctx context.Context, o GoalOptions) (g *Goal, again bool, e *proto.Error) {
	fp, err := c.Fingerprint()
	if err != nil {
		return nil, false, proto.Refuse(proto.CodeBadRequest, "cannot fingerprint the request: %v", err)
	}
	subj, err := c.bindSubject()
	if err != nil {
		return nil, false, proto.Refuse(proto.CodeBadRequest, "goal id: %v", err)
	}
	b := GoalBinding{GoalID: c.goalID(), Fingerprint: fp, State: GoalAccepted,
		Executor: Executor{InstanceID: c.InstanceID(), Epoch: c.Epoch()}, ReadinessDeadlineMs: o.Readiness.Milliseconds(), At: time.Now().UTC()}
	raw, _ := json.Marshal(b)
	g = &Goal{s: c.server, caller: c.Caller(), id: b.GoalID, fp: fp, binding: b}
	if incumbent, err := c.server.writeFact(ctx, subj, raw, validBinding(b.GoalID)); err != nil {
		if !errors.Is(err, ErrExists) {
			return nil, false, proto.Refuse(proto.CodeUnavailable, "recording goal %s: %v", b.GoalID, err)
		}
		var prev GoalBinding
		if err := json.Unmarshal(incumbent, &prev); err != nil {
			return nil, false, proto.Refuse(proto.CodeUnavailable, "reading goal %s: %v", b.GoalID, err)
		}
		if prev.Fingerprint != fp {
			return nil, false, proto.Refuse(proto.CodeConflict, "goal %s was already used for another request", b.GoalID)
		}
		if prev.State != GoalAccepted {
			return nil, false, proto.Refuse(proto.CodeFailedPrecondition, "goal %s was rejected: %v", b.GoalID, prev.Error)
		}
		g.binding = prev
		return g, true, nil
	}
	if o.Readiness > 0 {
		g.timer = time.AfterFunc(o.Readiness, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			reason, _ := json.Marshal(Uncertain{Reason: fmt.Sprintf("not ready within %s of acceptance", o.Readiness)})
			if _, err := g.finish(ctx, GoalUncertain, reason, nil); err != nil && !errors.Is(err, ErrGoalTerminal) {
				g.s.logf("goal %s: writing uncertain: %v", g.id, err)
			}
		})
	}
	return g, false, nil
}

// writeFact writes one create-only fact of this server's on EPF_.
func (s *Server) writeFact(ctx context.Context, subj string, raw []byte, valid func([]byte) bool) ([]byte, error) {
	return writeFact(ctx, s.js, s.nc, wire.EPFStream(s.opts.Space), subj, raw, valid, s.logf)
}

// validBinding accepts a goal binding of goal id.
func validBinding(id string) func([]byte) bool {
	return func(data []byte) bool {
		var b GoalBinding
		return json.Unmarshal(data, &b) == nil && b.GoalID == id && (b.State == GoalAccepted || b.State == GoalRejected)
	}
}

// validResult accepts a terminal fact of goal id.
func validResult(id string) func([]byte) bool {
	return func(data []byte) bool {
		var r GoalResult
		return json.Unmarshal(data, &r) == nil && r.GoalID == id && TerminalGoalState(r.State)
	}
}

// Progress publishes a progress event at this instance's epoch; a fenced server publishes nothing.
func (g *Goal) Progress(ctx context.Context, state string, data any) error {
	if g.s.fenced.Load() {
		return fmt.Errorf("goal %s: %w", g.id, ErrSuperseded)
	}
	raw, err := encodeData(data)
	if err != nil {
		return err
	}
	if state == "" {
		state = GoalRunning
	}
	subj, err := proto.GoalProgressSubject(g.s.opts.Space, g.s.opts.Endpoint, g.s.opts.InstanceID, g.s.Epoch(), g.caller, g.id)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(GoalProgress{GoalID: g.id, State: state, Data: raw, At: time.Now().UTC()})
	if _, err := g.s.js.Publish(ctx, subj, b); err != nil {
		return fmt.Errorf("goal %s progress: %w", g.id, err)
	}
	return nil
}

// Succeed writes the terminal succeeded fact.
func (g *Goal) Succeed(ctx context.Context, data any) error {
	raw, err := encodeData(data)
	if err != nil {
		return err
	}
	_, err = g.finish(ctx, GoalSucceeded, raw, nil)
	return err
}

// Fail writes the terminal failed fact.
func (g *Goal) Fail(ctx context.Context, e *proto.Error) error {
	_, err := g.finish(ctx, GoalFailed, nil, e)
	return err
}

// Finish writes the goal's one terminal fact with any terminal state; a goal that already has one returns ErrGoalTerminal and the incumbent.
func (g *Goal) Finish(ctx context.Context, state string, data any, e *proto.Error) (GoalResult, error) {
	raw, err := encodeData(data)
	if err != nil {
		return GoalResult{}, err
	}
	return g.finish(ctx, state, raw, e)
}

func (g *Goal) finish(ctx context.Context, state string, data json.RawMessage, e *proto.Error) (GoalResult, error) {
	if !TerminalGoalState(state) {
		return GoalResult{}, fmt.Errorf("goal %s: %q is not a terminal state", g.id, state)
	}
	subj, err := proto.GoalResultSubject(g.s.opts.Space, g.s.opts.Endpoint, g.caller, g.id)
	if err != nil {
		return GoalResult{}, err
	}
	r := GoalResult{GoalID: g.id, Fingerprint: g.fp, State: state, Data: data, Error: e,
		Executor: Executor{InstanceID: g.s.opts.InstanceID, Epoch: g.s.Epoch()}, At: time.Now().UTC()}
	raw, _ := json.Marshal(r)
	if prev, err := g.s.writeFact(ctx, subj, raw, validResult(g.id)); err != nil {
		if errors.Is(err, ErrExists) {
			var incumbent GoalResult
			_ = json.Unmarshal(prev, &incumbent)
			return incumbent, fmt.Errorf("goal %s: %w (%s)", g.id, ErrGoalTerminal, incumbent.State)
		}
		return GoalResult{}, err
	}
	g.once.Do(func() {
		if g.timer != nil {
			g.timer.Stop()
		}
	})
	return r, nil
}
