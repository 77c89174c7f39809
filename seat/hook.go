package seat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// A harness's hooks run `cotal hook <event>` inside the seat, which
// reaches the seat's connector through the self commands here (the broker
// vouches for the caller, so a hook acts on its own seat only). A hook
// waiting on a person (a permission prompt) long-polls: each call waits
// at most hookPoll for the answer, then asks again with hook-wait.

// hookPoll bounds one wait of a hook for a person's answer.
const hookPoll = 5 * time.Second

func (m *Manager) hookCommands() []ep.Command {
	self := []proto.Mode{proto.ModeSelf}
	return []ep.Command{
		{Name: wire.ManagerHook, Modes: self, Input: schemaOf(client.HookArgs{}), Output: schemaOf(client.HookReply{}), Capability: "self", Handler: m.selfHook},
		{Name: wire.ManagerHookWait, Modes: self, Input: schemaOf(client.HookWaitArgs{}), Output: schemaOf(client.HookReply{}), Capability: "self", Handler: m.selfHookWait},
		{Name: wire.ManagerHookDone, Modes: self, Input: schemaOf(client.HookDoneArgs{}), Output: schemaOf(struct{}{}), Capability: "self", Handler: m.selfHookDone},
		{Name: wire.ManagerAnswer, Input: schemaOf(client.AnswerArgs{}), Output: schemaOf(client.AnswerReply{}), Capability: "operator", Authorize: m.operatorOnly, Handler: m.answer},
	}
}

// hookCall is one hook event of a seat, as its harness's hook code sees
// it.
type hookCall struct {
	ctx   context.Context
	m     *Manager
	s     *Seat
	conn  *mesh.Endpoint
	event string
	input []byte
}

// report records the harness's state.
func (h *hookCall) report(r agentReport) { h.s.report(h.m, r) }

// agent is a copy of the harness's state as last reported.
func (h *hookCall) agent() agentState {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.agent
}

// begin takes the event and session a harness's hook input names (the
// event the hook was run for when the input names none), keeps the
// session unless it is ending, and returns the event and the source its
// reports give.
func (h *hookCall) begin(event, session string) (string, string) {
	if event != "" {
		h.event = event
	}
	if h.event != "SessionEnd" {
		h.session(session)
	}
	return h.event, "hook " + h.event
}

// session keeps the harness's session id. A new id (a fresh session in
// the same process) means what the old one was handed is not proven read.
func (h *hookCall) session(id string) {
	if id == "" {
		return
	}
	h.s.mu.Lock()
	old := h.s.agent.session
	h.s.agent.session = id
	h.s.mu.Unlock()
	if old != id {
		// A seat taken back or resumed later needs it.
		if err := h.m.saveCustody(h.s); err != nil {
			h.m.logf("seat %s: recording its harness session: %v", h.s.name, err)
		}
	}
	if old != "" && old != id {
		h.m.logf("seat %s: its harness began session %s (it was in %s)", h.s.name, id, old)
		h.s.unprove(h.m, "its session ended", func(f *flight) bool { return f.session == old })
	}
}

// confirm says the model answered: what the session's hooks wrote before
// is proven read.
func (h *hookCall) confirm() {
	h.s.mu.Lock()
	id := h.s.agent.session
	h.s.mu.Unlock()
	h.s.confirm(id)
}

// unproven puts back what the session's hooks wrote but no answer proved.
func (h *hookCall) unproven(why string) {
	h.s.mu.Lock()
	id := h.s.agent.session
	h.s.mu.Unlock()
	h.s.unprove(h.m, why, func(f *flight) bool { return f.session == id })
}

// handOut takes what is due and renders it for the hook's output.
func (h *hookCall) handOut() (text, token string) { return h.s.handOut(h.conn, h.event) }

// due reports whether a DM, task or mention waits (what keeps a turn going).
func (h *hookCall) due() bool { return due(h.conn, false) }

// continued counts a turn kept going at its end, and reports whether it
// may be kept going once more (at most max times in a row).
func (h *hookCall) continued(again bool, max int) bool {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if !again {
		h.s.agent.continued = 0
	}
	if h.s.agent.continued >= max {
		return false
	}
	h.s.agent.continued++
	return true
}

// promptBegan is a turn begun by a prompt: it ends a run of kept-going
// turns and carries what the session's start handed over.
func (h *hookCall) promptBegan() {
	h.s.mu.Lock()
	h.s.agent.continued = 0
	h.s.mu.Unlock()
	h.s.turnBegan()
}

// ask is what a hook waits on a person for. Its fields are fixed once made;
// done is closed when it is answered or dismissed, and output is set
// before.
type ask struct {
	token      string
	kind       string
	what       string
	answerable bool
	// render is the hook's output for an answer.
	render func(decision, message string) string
	done   chan struct{}
	output string // set before done closes
	why    string // how it ended, for the log
}

// await puts the question to a person (the seat reads waiting, with what
// it asks); the hook then waits for the answer with hook-wait, holding
// the reply's token from the start, so a hook stopped at any moment can
// say so. A question still open replaces the seat's earlier one, which is
// dismissed.
func (h *hookCall) await(kind, what string, render func(decision, message string) string, source string) (client.HookReply, error) {
	a := &ask{token: newToken(), kind: kind, what: what, answerable: render != nil, render: render, done: make(chan struct{})}
	h.s.mu.Lock()
	old := h.s.agent.ask
	if old != nil {
		h.s.endAsk(old)
	}
	h.s.agent.ask = a
	h.s.mu.Unlock()
	if old != nil {
		old.resolve("", "a later question replaced it")
	}
	h.report(agentReport{state: client.AgentWaiting, kind: kind, asks: what, source: source})
	return client.HookReply{Token: a.token, Waiting: true}, nil
}

// resolve ends a question once: with output for the hook to print ("" for
// nothing), and why.
func (a *ask) resolve(output, why string) bool {
	select {
	case <-a.done:
		return false
	default:
	}
	a.output, a.why = output, why
	close(a.done)
	return true
}

// over reports whether the question has ended.
func (a *ask) over() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// wait waits up to hookPoll for a question's end.
func (s *Seat) wait(ctx context.Context, a *ask) client.HookReply {
	t := time.NewTimer(hookPoll)
	defer t.Stop()
	select {
	case <-a.done:
		return client.HookReply{Output: a.output, Token: a.token}
	case <-t.C:
	case <-ctx.Done():
	}
	return client.HookReply{Token: a.token, Waiting: true}
}

// dismiss ends the seat's open question without an answer from cotal (the
// person answered it at the terminal, or the harness moved on); its hook
// prints nothing.
func (h *hookCall) dismiss(why string) {
	h.s.mu.Lock()
	a := h.s.agent.ask
	if a != nil {
		h.s.endAsk(a)
	}
	h.s.mu.Unlock()
	if a != nil && a.resolve("", why) {
		h.m.logf("seat %s: its question %q ended: %s", h.s.name, a.what, why)
	}
}

// openAsk is the seat's question with that token, open or lately ended
// (its hook may ask again only after the answer came), nil for none.
func (s *Seat) openAsk(token string) *ask {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.agent.ask; a != nil && a.token == token {
		return a
	}
	for _, a := range s.agent.ended {
		if a.token == token {
			return a
		}
	}
	return nil
}

// keptAsks is how many ended questions a seat keeps for their hooks.
const keptAsks = 8

// endAsk takes the seat's question off it once it ended, keeping it a
// while for its hook's next ask; it needs s.mu.
func (s *Seat) endAsk(a *ask) {
	if s.agent.ask == a {
		s.agent.ask = nil
	}
	s.agent.ended = append(s.agent.ended, a)
	if n := len(s.agent.ended) - keptAsks; n > 0 {
		s.agent.ended = s.agent.ended[n:]
	}
}

// hookSeat is the self-mode caller's seat and its connector.
func (m *Manager) hookSeat(c *ep.Call) (*Seat, *mesh.Endpoint, *proto.Error) {
	s, e := m.seatOf(c.Caller())
	if e != nil {
		return nil, nil, e
	}
	conn := s.connector()
	if conn == nil {
		if st := s.stateNow(); st == StateExited || st == StateLost {
			return nil, nil, proto.Refuse(proto.CodeFailedPrecondition, "seat %s has exited", s.name)
		}
		return nil, nil, proto.Refuse(proto.CodeUnavailable, "seat %s is not on the mesh yet (%s)", s.name, s.stateNow())
	}
	return s, conn, nil
}

func (s *Seat) stateNow() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

func (m *Manager) selfHook(ctx context.Context, c *ep.Call) (any, *proto.Error) {
	s, conn, e := m.hookSeat(c)
	if e != nil {
		m.logf("hook from %s refused: %s", c.Caller().ID(), e.Message)
		return nil, e
	}
	var a client.HookArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	if a.Event == "report" {
		// The hook command saying why an earlier call of it failed.
		m.logf("seat %s: a hook failed: %s", s.name, string(a.Input))
		return client.HookReply{}, nil
	}
	h := &hookCall{ctx: ctx, m: m, s: s, conn: conn, event: a.Event, input: a.Input}
	r, err := s.h.hook(h)
	if errors.Is(err, errNoHooks) {
		return nil, proto.Refuse(proto.CodeFailedPrecondition, "seat %s runs %s, which has no cotal hooks", s.name, s.harness)
	}
	if err != nil {
		m.logf("seat %s: its %s hook: %v", s.name, a.Event, err)
		return nil, proto.Refuse(proto.CodeBadRequest, "%s hook: %v", a.Event, err)
	}
	return r, nil
}

func (m *Manager) selfHookWait(ctx context.Context, c *ep.Call) (any, *proto.Error) {
	s, _, e := m.hookSeat(c)
	if e != nil {
		return nil, e
	}
	var a client.HookWaitArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	q := s.openAsk(a.Token)
	if q == nil {
		// Long gone: nothing to print.
		return client.HookReply{Token: a.Token}, nil
	}
	return s.wait(ctx, q), nil
}

func (m *Manager) selfHookDone(_ context.Context, c *ep.Call) (any, *proto.Error) {
	s, _, e := m.hookSeat(c)
	if e != nil {
		return nil, e
	}
	var a client.HookDoneArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	if s.written(m, a.Token, a.Written, a.Why) {
		return struct{}{}, nil
	}
	if q := s.openAsk(a.Token); q != nil && !a.Written && !q.over() {
		// The harness stopped the hook: its question was answered at the
		// terminal (a refusal interrupts the turn). Only the screen can
		// show it idle now.
		h := &hookCall{m: m, s: s}
		h.dismiss("its hook was stopped: " + a.Why)
		h.report(agentReport{state: client.AgentIdle, source: "hook stopped: its question was answered at the terminal", screenIdle: true})
	}
	return struct{}{}, nil
}

// answer is a person's answer to what a seat waits on, sent back through
// the hook that asked: no keystroke answers a dialog.
func (m *Manager) answer(_ context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.AnswerArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	s, e := m.seat(a.Name)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	q := s.agent.ask
	st := s.agent
	s.mu.Unlock()
	if q == nil || !q.answerable {
		if st.state == client.AgentWaiting {
			return nil, proto.Refuse(proto.CodeFailedPrecondition, "seat %s asks %q, which cotal cannot answer for it; attach to answer it (cotal attach %s)", a.Name, st.asks, a.Name)
		}
		return nil, proto.Refuse(proto.CodeFailedPrecondition, "seat %s asks nothing now (it is %s)", a.Name, dashIfEmpty(st.state))
	}
	if !q.resolve(q.render(a.Decision, a.Message), a.Decision+" by "+c.Caller().ID()) {
		return nil, proto.Refuse(proto.CodeConflict, "seat %s's question %q was already answered", a.Name, q.what)
	}
	s.mu.Lock()
	s.endAsk(q)
	s.mu.Unlock()
	m.logf("seat %s: %q answered %s by %s", s.name, q.what, a.Decision, c.Caller().ID())
	s.report(m, agentReport{state: client.AgentWorking, source: fmt.Sprintf("answered %s from cotal", a.Decision)})
	return client.AnswerReply{Name: a.Name, Decision: a.Decision, Asked: q.what}, nil
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "not reporting"
	}
	return s
}
