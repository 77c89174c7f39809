package seat

import (
	"time"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/seat/client"
)

// agentState is what the seat's harness last reported of itself, through
// its hooks (or, before its first turn, what its screen showed). The
// seat's mu guards it.
type agentState struct {
	reported bool   // a report came
	state    string // client.AgentWorking, AgentWaiting, AgentIdle
	kind     string // when waiting: client.AskApproval, ...
	asks     string // when waiting: what it asks
	activity string // when working: what it runs, if known
	source   string
	since    time.Time // when the state (or what it asks) last changed
	// atPrompt: the harness's reports prove it sits idle at its own
	// prompt (its turn ended and nothing was asked or typed since).
	atPrompt bool
	// screenIdle: it reported no turn yet, or its last dialog closed
	// without a word from it, so only its screen can show it idle.
	screenIdle bool
	session    string // the harness's own session id
	continued  int    // consecutive turns kept going at its Stop
	ask        *ask   // what a hook of it waits on a person for, nil for none
	ended      []*ask // its latest questions that ended, for their hooks' next ask
}

// agentReport is one report of a harness's state.
type agentReport struct {
	state      string
	kind, asks string // when waiting
	activity   string // when working
	source     string
	atPrompt   bool
	screenIdle bool
}

// report records what the harness says it is doing and mirrors it to the
// seat's presence: the status, what it runs or asks as the activity, and
// what it waits on as the condition.
func (s *Seat) report(m *Manager, r agentReport) {
	s.mu.Lock()
	a := &s.agent
	changed := !a.reported || a.state != r.state || a.asks != r.asks || a.kind != r.kind
	if changed {
		a.since = time.Now()
	}
	a.reported = true
	a.state, a.kind, a.asks, a.activity, a.source = r.state, r.kind, r.asks, r.activity, r.source
	a.atPrompt, a.screenIdle = r.atPrompt, r.screenIdle
	s.mu.Unlock()
	if changed {
		m.logf("seat %s: %s (%s)", s.name, describeAgent(r), r.source)
	}
	s.mirror()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func describeAgent(r agentReport) string {
	if r.state == client.AgentWaiting && r.asks != "" {
		return "waiting: " + r.asks
	}
	return r.state
}

// mirror writes the harness's state into the seat's presence, when the
// seat is on the roster and the harness has reported.
func (s *Seat) mirror() {
	s.mu.Lock()
	conn, a := s.conn, s.agent
	s.mu.Unlock()
	if conn == nil || !a.reported {
		return
	}
	if _, online := conn.PresenceRecord(); !online {
		return
	}
	status := presence.Status(a.state)
	if _, err := presence.ParseStatus(a.state); err != nil {
		return
	}
	activity := a.activity
	var cond *presence.Condition
	if status == presence.Waiting {
		activity = a.asks
		cond = &presence.Condition{Code: a.kind, Source: a.source, Message: a.asks, Since: a.since.UnixMilli()}
	}
	_ = conn.SetStatus(status, activity)
	_ = conn.SetCondition(cond)
}

// agentRow is the harness's state as ps shows it, nil before any report.
func (s *Seat) agentRow() *client.AgentState {
	a := &s.agent
	if !a.reported {
		return nil
	}
	return &client.AgentState{
		State: a.state, Kind: a.kind, Asks: a.asks, SinceMs: ms(a.since), Source: a.source,
		AtPrompt: a.atPrompt, Answerable: a.ask != nil && a.ask.answerable,
	}
}
