// Package modelserver is a scripted model server for tests: it listens on
// loopback, answers the model requests a real harness (Claude Code, Codex,
// opencode) makes with what the test scripted, and records every request
// with its arrival time on the server's clock.
//
// The script is protocol-neutral (this file and script.go): a request is
// decoded into a Request, the script picks a Step, and the step is encoded
// back. Each wire protocol is a file of its own registering its routes on
// the server's mux: anthropic.go (the Anthropic Messages API, Claude Code),
// responses.go (the OpenAI Responses API, Codex) and chat.go (OpenAI Chat
// Completions, opencode).
// Test only; it imports no package of this module.
package modelserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Kind is what a request is for, as its protocol file reads it.
type Kind int

const (
	// Main is a turn of the agent's loop: it carries the agent's tools,
	// and the script answers it.
	Main Kind = iota
	// Side is a request without tools (a session title, a summary): it is
	// answered with SideText.
	Side
	// Classifier is an auto-mode permission classifier's request: it is
	// answered with the protocol's allow verdict.
	Classifier
)

func (k Kind) String() string {
	switch k {
	case Side:
		return "side"
	case Classifier:
		return "classifier"
	}
	return "main"
}

// Request is one model request as the server received it.
type Request struct {
	Seq      int       // 1 for the first request the server received
	At       time.Time // when it arrived, on the server's clock
	Protocol string    // "anthropic", "responses", "chat"
	Path     string
	Kind     Kind
	Model    string
	System   string   // the system prompt as text
	Tools    []string // the names of the tools it offers the model
	Messages []Message
	// New is the text of what came after the model's last message: the
	// user's prompt, hook context, tool results. A chain's trigger is
	// matched against it, so history never triggers twice.
	New string
	// Results are the tool results after the model's last message.
	Results []Result
	Raw     []byte // the request body

	// Answer is what the server replied; Chain names the chain that
	// answered it ("" for the default reply or a side request).
	Answer Step
	Chain  string
}

// Message is one message of a request's conversation, flattened.
type Message struct {
	Role    string // user, assistant, system, tool
	Text    string // its text parts joined by newlines
	Calls   []Call
	Results []Result
}

// Result is a tool result the harness sends back.
type Result struct {
	CallID  string
	Text    string
	IsError bool
}

// Contains reports whether s occurs anywhere in the request's
// conversation or system prompt.
func (r *Request) Contains(s string) bool {
	if strings.Contains(r.System, s) {
		return true
	}
	for _, m := range r.Messages {
		if strings.Contains(m.Text, s) {
			return true
		}
		for _, res := range m.Results {
			if strings.Contains(res.Text, s) {
				return true
			}
		}
	}
	return false
}

// Result is the tool result for a call the server made, if this request
// carries it after the model's last message.
func (r *Request) Result(callID string) (Result, bool) {
	for _, res := range r.Results {
		if res.CallID == callID {
			return res, true
		}
	}
	return Result{}, false
}

// HasTool reports whether the request offers the model a tool by name.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// fresh sets New and Results from the messages after the model's last
// one (its index, -1 for none).
func (r *Request) fresh(lastModel int) {
	var text []string
	r.Results = nil
	for _, m := range r.Messages[lastModel+1:] {
		if m.Text != "" {
			text = append(text, m.Text)
		}
		for _, res := range m.Results {
			text = append(text, res.Text)
		}
		r.Results = append(r.Results, m.Results...)
	}
	r.New = strings.Join(text, "\n")
}

// Server is the scripted model server. mu guards everything below it.
type Server struct {
	srv *http.Server
	ln  net.Listener
	mux *http.ServeMux

	// SideText answers side requests (a title, a summary).
	SideText string

	mu       sync.Mutex
	requests []*Request
	chains   []*chain
	calls    int            // call ids handed out
	notify   chan struct{}  // closed and replaced on every new request
	other    map[string]int // requests to paths no protocol serves
	closed   bool
	done     chan struct{} // closed by Close: every held reply is released
	failures []string      // requests the server could not decode
}

// Start listens on a free loopback port and serves until Close.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("modelserver: listening on loopback: %w", err)
	}
	s := &Server{ln: ln, mux: http.NewServeMux(), notify: make(chan struct{}), done: make(chan struct{}), other: map[string]int{}, SideText: "Scripted session"}
	s.routeAnthropic()
	s.routeResponses()
	s.routeChat()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.other[r.Method+" "+r.URL.Path]++
		s.mu.Unlock()
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"the scripted model server does not serve this path"}}`, http.StatusNotFound)
	})
	s.srv = &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the server's base URL, http://127.0.0.1:PORT.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close releases every held reply and stops the server.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	return err
}

// Requests is every request received so far, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Find is the first request pred accepts, nil for none.
func (s *Server) Find(pred func(*Request) bool) *Request {
	for _, r := range s.Requests() {
		if pred(r) {
			return r
		}
	}
	return nil
}

// Wait waits until a request pred accepts has arrived, or ctx ends.
func (s *Server) Wait(ctx context.Context, pred func(*Request) bool) (*Request, error) {
	for {
		s.mu.Lock()
		ch := s.notify
		reqs := append([]*Request(nil), s.requests...)
		s.mu.Unlock()
		for _, r := range reqs {
			if pred(r) {
				return r, nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("modelserver: no such request among %d received: %w", len(reqs), ctx.Err())
		}
	}
}

// Unserved counts the requests to paths no protocol serves, by method and
// path: what a harness asked that the server did not know.
func (s *Server) Unserved() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.other))
	for k, v := range s.other {
		out[k] = v
	}
	return out
}

// Failures are the requests the server could not decode.
func (s *Server) Failures() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.failures...)
}

func (s *Server) fail(format string, args ...any) {
	s.mu.Lock()
	s.failures = append(s.failures, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

// record stamps a decoded request, picks its answer and signals waiters.
// The answer's call ids are fresh; a held step is returned with its hold,
// which the caller waits on (outside the lock) before encoding.
func (s *Server) record(r *Request) Step {
	s.mu.Lock()
	r.Seq = len(s.requests) + 1
	var st Step
	switch r.Kind {
	case Main:
		st, r.Chain = s.pick(r)
	case Side:
		st = Say(s.SideText)
	}
	r.Answer = st
	s.requests = append(s.requests, r)
	close(s.notify)
	s.notify = make(chan struct{})
	s.mu.Unlock()
	return st
}

// hold waits for a held step's release, the request's end or the
// server's close.
func (s *Server) hold(ctx context.Context, st Step) {
	if st.Hold == nil {
		return
	}
	select {
	case <-st.Hold:
	case <-ctx.Done():
	case <-s.done:
	}
}
