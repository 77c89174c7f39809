package modelserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// OpenAI Chat Completions, as opencode speaks it (through an
// OpenAI-compatible provider): POST /v1/chat/completions, streamed as
// server-sent chunks ending with [DONE] when stream is true.
const protoChat = "chat"

func (s *Server) routeChat() {
	s.mux.HandleFunc("POST /v1/chat/completions", s.chat)
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCalls  []chatToolCall  `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// decodeChat reads a Chat Completions request into the protocol-neutral
// form.
func decodeChat(body []byte) (*Request, bool, error) {
	var a chatRequest
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, false, err
	}
	r := &Request{Protocol: protoChat, Path: "/v1/chat/completions", Model: a.Model, Raw: body}
	for _, t := range a.Tools {
		if t.Function.Name != "" {
			r.Tools = append(r.Tools, t.Function.Name)
		}
	}
	var system []string
	lastModel := -1
	for _, m := range a.Messages {
		msg := Message{Role: m.Role, Text: partsText(m.Content)}
		switch m.Role {
		case "system", "developer":
			system = append(system, msg.Text)
			continue
		case "assistant":
			lastModel = len(r.Messages)
			for _, c := range m.ToolCalls {
				msg.Calls = append(msg.Calls, Call{ID: c.ID, Name: c.Function.Name, Input: json.RawMessage(orEmptyObject(c.Function.Arguments))})
			}
		case "tool":
			msg.Results = []Result{{CallID: m.ToolCallID, Text: msg.Text}}
			msg.Text = ""
		}
		r.Messages = append(r.Messages, msg)
	}
	r.System = strings.Join(system, "\n")
	r.fresh(lastModel)
	if len(r.Tools) == 0 {
		r.Kind = Side
	}
	return r, a.Stream, nil
}

func (s *Server) chat(w http.ResponseWriter, hr *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		return
	}
	r, stream, err := decodeChat(body)
	if err != nil {
		s.fail("POST /v1/chat/completions: %v", err)
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"undecodable"}}`, http.StatusBadRequest)
		return
	}
	r.At = at
	st := s.record(r)
	s.hold(hr.Context(), st)
	if hr.Context().Err() != nil {
		return
	}
	model := r.Model
	if model == "" {
		model = "scripted"
	}
	id := fmt.Sprintf("chatcmpl-cotal%06d", r.Seq)
	finish := "stop"
	if len(st.Calls) > 0 {
		finish = "tool_calls"
	}
	var calls []map[string]any
	for i, c := range st.Calls {
		calls = append(calls, map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(c.Input)}})
	}
	usage := map[string]int{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
	if !stream {
		msg := map[string]any{"role": "assistant", "content": st.Text}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, compact(map[string]any{"id": id, "object": "chat.completion", "created": at.Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage}))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	chunk := func(delta map[string]any, reason any, extra map[string]any) {
		v := map[string]any{"id": id, "object": "chat.completion.chunk", "created": at.Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": reason}}}
		for k, x := range extra {
			v[k] = x
		}
		fmt.Fprintf(w, "data: %s\n\n", compact(v))
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	if st.Text != "" {
		chunk(map[string]any{"content": st.Text}, nil, nil)
	}
	if len(calls) > 0 {
		chunk(map[string]any{"tool_calls": calls}, nil, nil)
	}
	chunk(map[string]any{}, finish, map[string]any{"usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
}
