package modelserver

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Step is one reply of the model: its text, then its tool calls. A step
// with a Hold is answered only once Hold is closed (or the server
// closes): the test decides when the model "finishes thinking".
type Step struct {
	Text  string
	Calls []Call
	Hold  <-chan struct{}
}

// Call is one tool call of a reply. The server gives it its id.
type Call struct {
	ID    string
	Name  string
	Input json.RawMessage
}

// Say is a reply of text only, ending the model's turn.
func Say(text string) Step { return Step{Text: text} }

// Use is a reply calling one tool with a JSON input. A malformed input is
// the test's own mistake and panics, naming it.
func Use(name, input string) Step {
	if !json.Valid([]byte(input)) {
		panic(fmt.Sprintf("modelserver.Use(%q): the input is not JSON: %s", name, input))
	}
	return Step{Calls: []Call{{Name: name, Input: json.RawMessage(input)}}}
}

// HeldBy makes the step wait for ch before it is sent.
func (st Step) HeldBy(ch <-chan struct{}) Step {
	st.Hold = ch
	return st
}

// DefaultText ends a main request nothing was scripted for.
const DefaultText = "(the scripted model has nothing to say to this)"

// NewContains is a trigger: the request's new content (after the model's
// last message) contains sub.
func NewContains(sub string) func(*Request) bool {
	return func(r *Request) bool { return strings.Contains(r.New, sub) }
}

// chain is one scripted conversation; the server's mu guards it.
type chain struct {
	name    string
	trigger func(*Request) bool
	steps   []Step
	next    int      // the index of the step to answer next
	pending []string // the call ids of the last step sent, awaiting their results
}

// Chain scripts a conversation: the first main request whose new content
// satisfies trigger is answered with the first step; each later step
// answers the request that carries the results of the previous step's
// calls. A step without calls ends the chain. Chains are tried in the
// order they were added; a main request no chain claims gets DefaultText.
func (s *Server) Chain(name string, trigger func(*Request) bool, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chains = append(s.chains, &chain{name: name, trigger: trigger, steps: steps})
}

// ChainDone reports whether every step of the named chain was sent.
func (s *Server) ChainDone(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.chains {
		if c.name == name {
			return c.next >= len(c.steps)
		}
	}
	return false
}

// pick is the answer to a main request; s.mu is held.
func (s *Server) pick(r *Request) (Step, string) {
	for _, c := range s.chains {
		if c.next == 0 || c.next >= len(c.steps) || len(c.pending) == 0 {
			continue
		}
		if _, ok := r.Result(c.pending[0]); ok {
			return s.advance(c, r), c.name
		}
	}
	for _, c := range s.chains {
		if c.next == 0 && len(c.steps) > 0 && c.trigger(r) {
			return s.advance(c, r), c.name
		}
	}
	return Say(DefaultText), ""
}

// advance sends the chain's next step, with fresh call ids.
func (s *Server) advance(c *chain, r *Request) Step {
	st := c.steps[c.next]
	c.next++
	st.Calls = append([]Call(nil), st.Calls...)
	c.pending = c.pending[:0]
	for i := range st.Calls {
		s.calls++
		st.Calls[i].ID = fmt.Sprintf("%s%04d", idPrefix(r.Protocol), s.calls)
		c.pending = append(c.pending, st.Calls[i].ID)
	}
	if len(st.Calls) == 0 {
		c.next = len(c.steps) // a reply without calls ends the conversation
	}
	return st
}

// idPrefix is how a protocol's call ids begin.
func idPrefix(protocol string) string {
	if protocol == protoAnthropic {
		return "toolu_cotal"
	}
	return "call_cotal"
}
