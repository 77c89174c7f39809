package modelserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The Anthropic Messages API, as Claude Code speaks it: POST /v1/messages
// (streamed as server-sent events when stream is true) and
// /v1/messages/count_tokens.
const protoAnthropic = "anthropic"

// ClassifierAllow is the auto-mode classifier's verdict that lets a tool
// call run.
const ClassifierAllow = "<block>no</block>"

func (s *Server) routeAnthropic() {
	s.mux.HandleFunc("POST /v1/messages", s.anthropicMessages)
	// Claude Code checks it can reach its API before it starts.
	s.mux.HandleFunc("HEAD /api/hello", func(http.ResponseWriter, *http.Request) {})
	s.mux.HandleFunc("POST /v1/messages/count_tokens", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"input_tokens":100}`)
	})
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type anthropicRequest struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"`
	Stream   bool            `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// blocks reads a content field: a string or a list of blocks.
func blocks(raw json.RawMessage) []anthropicBlock {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var bs []anthropicBlock
	_ = json.Unmarshal(raw, &bs)
	return bs
}

// blockText joins the text of a content field.
func blockText(raw json.RawMessage) string {
	var parts []string
	for _, b := range blocks(raw) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// decodeAnthropic reads a Messages request into the protocol-neutral form.
func decodeAnthropic(body []byte) (*Request, bool, error) {
	var a anthropicRequest
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, false, err
	}
	r := &Request{Protocol: protoAnthropic, Path: "/v1/messages", Model: a.Model, System: blockText(a.System), Raw: body}
	for _, t := range a.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	lastAssistant := -1
	for i, m := range a.Messages {
		msg := Message{Role: m.Role}
		var text []string
		for _, b := range blocks(m.Content) {
			switch b.Type {
			case "text":
				text = append(text, b.Text)
			case "tool_use":
				msg.Calls = append(msg.Calls, Call{ID: b.ID, Name: b.Name, Input: b.Input})
			case "tool_result":
				msg.Results = append(msg.Results, Result{CallID: b.ToolUseID, Text: blockText(b.Content), IsError: b.IsError})
			}
		}
		msg.Text = strings.Join(text, "\n")
		if m.Role == "assistant" {
			lastAssistant = i
		}
		r.Messages = append(r.Messages, msg)
	}
	r.fresh(lastAssistant)
	switch {
	case strings.Contains(strings.ToLower(r.System), "security monitor"):
		r.Kind = Classifier
	case len(r.Tools) == 0:
		r.Kind = Side
	}
	return r, a.Stream, nil
}

func (s *Server) anthropicMessages(w http.ResponseWriter, hr *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		return
	}
	r, stream, err := decodeAnthropic(body)
	if err != nil {
		s.fail("POST /v1/messages: %v", err)
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"undecodable"}}`, http.StatusBadRequest)
		return
	}
	r.At = at
	st := s.record(r)
	if r.Kind == Classifier {
		st = Say(ClassifierAllow)
	}
	s.hold(hr.Context(), st)
	if hr.Context().Err() != nil {
		return
	}
	model := r.Model
	if model == "" {
		model = "scripted"
	}
	if !stream {
		writeAnthropicMessage(w, model, r.Seq, st)
		return
	}
	writeAnthropicStream(w, model, r.Seq, st)
}

// anthropicContent is a step as a message's content blocks.
func anthropicContent(st Step) []map[string]any {
	var out []map[string]any
	if st.Text != "" || len(st.Calls) == 0 {
		out = append(out, map[string]any{"type": "text", "text": st.Text})
	}
	for _, c := range st.Calls {
		out = append(out, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": c.Input})
	}
	return out
}

func stopReason(st Step) string {
	if len(st.Calls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

func usage() map[string]int {
	return map[string]int{"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

// compact is v as JSON on one line, with <, > and & as they are.
func compact(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

func writeAnthropicMessage(w http.ResponseWriter, model string, seq int, st Step) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, compact(map[string]any{
		"id": fmt.Sprintf("msg_cotal%06d", seq), "type": "message", "role": "assistant", "model": model,
		"content": anthropicContent(st), "stop_reason": stopReason(st), "stop_sequence": nil, "usage": usage(),
	}))
}

// writeAnthropicStream sends the step as the Messages API's event stream:
// message_start, each content block (start, one delta, stop),
// message_delta with the stop reason, message_stop.
func writeAnthropicStream(w http.ResponseWriter, model string, seq int, st Step) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	event := func(name string, v any) {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, compact(v))
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_cotal%06d", seq), "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage(),
	}})
	for i, b := range anthropicContent(st) {
		switch b["type"] {
		case "text":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		case "tool_use":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(b["input"].(json.RawMessage))}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stopReason(st), "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})
	event("message_stop", map[string]any{"type": "message_stop"})
	if fl != nil {
		fl.Flush()
	}
}
