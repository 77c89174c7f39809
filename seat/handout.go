package seat

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Delivery through a harness's hooks (spec §12 with the harness's own
// integration points): a hook's output carries the arrivals due now to the
// model, and the items are settled in two steps. Taken, they are in
// flight under a token; the hook says it wrote its output (hook-done);
// the next report of the same session that only a model's answer can
// cause (a tool call, the end of a turn) proves the model had them, and
// only then are they acked. A flight the hook never confirms writing goes
// back to the inbox marked as a possible repeat; one written but never
// proven (the harness's request failed, its session ended) goes back the
// same way.

// hookGrace bounds how long a hook may take to say it wrote its output
// (Options.HookGrace).
const hookGrace = 15 * time.Second

// flight is what one hook output handed to the harness. The seat's mu
// guards it.
type flight struct {
	token   string
	items   []*mesh.Item
	event   string // the hook event that carried them
	session string
	written bool
	at      time.Time
	// startup: handed over at its session's start, which no turn has
	// carried to the model yet: the session must be woken for it.
	startup bool
}

func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// attendFn is the attention table for the seat's connector now: what to
// do with each arrival when the agent is idle (or not).
func attendFn(conn *mesh.Endpoint, idle bool) func(*mesh.Item) mesh.Action {
	me := conn.Me()
	rec, _ := conn.PresenceRecord()
	att := rec.Attention
	if att == "" {
		att = presence.Open
	}
	return func(it *mesh.Item) mesh.Action {
		return mesh.Attend(it, me, att, conn.ChannelMode(it.Subject.Channel), idle)
	}
}

// due reports whether an arrival the attention table puts in front of the
// agent now waits (idle: as it stands at its prompt; else mid-turn, where
// only DMs, tasks and mentions of it are due).
func due(conn *mesh.Endpoint, idle bool) bool {
	action := attendFn(conn, idle)
	return conn.AnyWhere(func(it *mesh.Item) bool { return !it.PullOnly && action(it) == mesh.Inject })
}

// handOut takes what is due for a turn that is starting or going on (DMs,
// tasks and mentions, and the posts held for the next turn) and renders it
// as one block for the hook's output; the items are in flight under the
// token until settled. It returns "" when nothing is due.
func (s *Seat) handOut(conn *mesh.Endpoint, event string) (text, token string) {
	action := attendFn(conn, false)
	items := conn.TakeWhere(func(it *mesh.Item) bool {
		if it.PullOnly {
			return false
		}
		a := action(it)
		return a == mesh.Inject || a == mesh.Hold
	})
	if len(items) == 0 {
		return "", ""
	}
	me := conn.Me()
	lines := make([]string, len(items))
	repeat := make([]bool, len(items))
	f := &flight{token: newToken(), items: items, event: event, at: time.Now(), startup: event == "SessionStart"}
	s.mu.Lock()
	f.session = s.agent.session
	for i, it := range items {
		lines[i] = render.Item(it.Kind, it.Subject, it.Msg, it.Historical, me)
		repeat[i] = it.Msg.ID != "" && s.repeats[it.Msg.ID]
	}
	if s.flights == nil {
		s.flights = map[string]*flight{}
	}
	s.flights[f.token] = f
	s.mu.Unlock()
	for _, it := range items {
		it.Note(wire.RungTaken, "handed to its "+event+" hook")
	}
	return render.Block(lines, repeat), f.token
}

// written settles a flight's first step: the hook wrote it (or it did
// not, and the items go back as they were).
func (s *Seat) written(m *Manager, token string, ok bool, why string) bool {
	s.mu.Lock()
	f := s.flights[token]
	if f == nil {
		s.mu.Unlock()
		return false
	}
	if !ok {
		delete(s.flights, token)
	} else {
		f.written = true
	}
	s.mu.Unlock()
	if !ok {
		m.logf("seat %s: its %s hook did not write %d message(s) (%s); they stay in its inbox", s.name, f.event, len(f.items), why)
		s.requeue(f, false)
		return true
	}
	for _, it := range f.items {
		it.Note(wire.RungInjected, "written by its "+f.event+" hook; acked once its model answers")
	}
	return true
}

// awaitsTurn reports whether what the session's start handed over waits
// for a turn to reach the model.
func (s *Seat) awaitsTurn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.flights {
		if f.startup && f.written && f.session == s.agent.session {
			return true
		}
	}
	return false
}

// turnBegan says a turn of the session started: it carries what the
// session's start handed over.
func (s *Seat) turnBegan() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.flights {
		f.startup = false
	}
}

// confirm acks every flight of the session its hooks wrote: a report
// only the model's answer can cause has come, so the model had them.
func (s *Seat) confirm(session string) {
	s.mu.Lock()
	var done []*flight
	for tok, f := range s.flights {
		if f.written && f.session == session {
			done = append(done, f)
			delete(s.flights, tok)
		}
	}
	for _, f := range done {
		for _, it := range f.items {
			delete(s.repeats, it.Msg.ID)
		}
	}
	s.mu.Unlock()
	for _, f := range done {
		for _, it := range f.items {
			_ = it.Ack()
		}
	}
}

// unprove puts back every flight of the session not yet proven (or of any
// session but keep, when session is ""): the model may or may not have
// seen them, so they come again marked as possible repeats.
func (s *Seat) unprove(m *Manager, why string, match func(*flight) bool) {
	s.mu.Lock()
	var back []*flight
	for tok, f := range s.flights {
		if match(f) {
			back = append(back, f)
			delete(s.flights, tok)
		}
	}
	s.mu.Unlock()
	for _, f := range back {
		m.logf("seat %s: %d message(s) its %s hook handed over are not proven read (%s); they come again as possible repeats", s.name, len(f.items), f.event, why)
		s.requeue(f, true)
	}
}

// expireFlights puts back the flights whose hook never said it wrote them.
func (s *Seat) expireFlights(m *Manager) {
	now := time.Now()
	s.unprove(m, "its hook never said it wrote them", func(f *flight) bool {
		return !f.written && now.Sub(f.at) > m.opts.HookGrace
	})
}

// requeue gives a flight's items back to the inbox, marked as possible
// repeats when the model may have seen them.
func (s *Seat) requeue(f *flight, repeat bool) {
	s.mu.Lock()
	conn := s.conn
	if repeat {
		if s.repeats == nil {
			s.repeats = map[string]bool{}
		}
		for _, it := range f.items {
			if it.Msg.ID != "" {
				s.repeats[it.Msg.ID] = true
			}
		}
	}
	s.mu.Unlock()
	if conn == nil {
		return
	}
	for _, it := range f.items {
		it.Note(wire.RungTaken, "back in its inbox: its hook's delivery is not proven")
	}
	conn.Requeue(f.items)
}
