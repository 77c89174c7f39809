package modelserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The OpenAI Responses API, as Codex speaks it: POST /v1/responses,
// streamed as server-sent events when stream is true. A harness's MCP
// tools come grouped under a namespace tool ({"type": "namespace", "name":
// "mcp__cotal", "tools": [...]}); the script names such a tool by its
// whole name, namespace and tool joined by "__" (mcp__cotal__cotal_dm), and
// the reply calls it as the namespace's.
const protoResponses = "responses"

func (s *Server) routeResponses() {
	s.mux.HandleFunc("POST /v1/responses", s.responses)
}

// responsesItem is one item of a request's input or a reply's output.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	Name      string          `json:"name,omitempty"`
	Namespace string          `json:"namespace,omitempty"`
	Arguments string          `json:"arguments,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
}

type responsesTool struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Tools []responsesTool `json:"tools"`
}

type responsesRequest struct {
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"`
	Stream       bool            `json:"stream"`
	Input        json.RawMessage `json:"input"`
	Tools        []responsesTool `json:"tools"`
}

// partsText joins the text of a content field: a string, or a list of
// parts ({"type": "input_text" | "output_text" | "text", "text": ...}).
func partsText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		if p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// decodeResponses reads a Responses request into the protocol-neutral
// form; namespaces are its namespace tools, by name, for the reply.
func decodeResponses(body []byte) (r *Request, stream bool, namespaces map[string]bool, err error) {
	var a responsesRequest
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, false, nil, err
	}
	r = &Request{Protocol: protoResponses, Path: "/v1/responses", Model: a.Model, Raw: body}
	system := []string{a.Instructions}
	namespaces = map[string]bool{}
	for _, t := range a.Tools {
		if t.Type == "namespace" {
			namespaces[t.Name] = true
			for _, in := range t.Tools {
				r.Tools = append(r.Tools, t.Name+"__"+in.Name)
			}
			continue
		}
		if t.Name != "" {
			r.Tools = append(r.Tools, t.Name)
		}
	}
	var items []responsesItem
	var text string
	if json.Unmarshal(a.Input, &text) == nil {
		items = []responsesItem{{Type: "message", Role: "user", Content: a.Input}}
	} else if err := json.Unmarshal(a.Input, &items); err != nil {
		return nil, false, nil, fmt.Errorf("input: %w", err)
	}
	lastModel := -1
	for _, it := range items {
		switch it.Type {
		case "message", "":
			if (it.Role == "developer" || it.Role == "system") && len(r.Messages) == 0 {
				// The instructions before the conversation; later ones
				// (a hook's added context) are part of it.
				system = append(system, partsText(it.Content))
				continue
			}
			if it.Role == "assistant" {
				lastModel = len(r.Messages)
			}
			r.Messages = append(r.Messages, Message{Role: it.Role, Text: partsText(it.Content)})
		case "function_call", "custom_tool_call":
			name := it.Name
			if it.Namespace != "" {
				name = it.Namespace + "__" + it.Name
			}
			lastModel = len(r.Messages)
			r.Messages = append(r.Messages, Message{Role: "assistant", Calls: []Call{{ID: it.CallID, Name: name, Input: json.RawMessage(orEmptyObject(it.Arguments))}}})
		case "function_call_output", "custom_tool_call_output":
			r.Messages = append(r.Messages, Message{Role: "tool", Results: []Result{{CallID: it.CallID, Text: partsText(it.Output)}}})
		}
	}
	r.System = strings.Join(system, "\n")
	r.fresh(lastModel)
	if len(r.Tools) == 0 {
		r.Kind = Side
	}
	return r, a.Stream, namespaces, nil
}

// orEmptyObject is s when it is JSON, else {}.
func orEmptyObject(s string) string {
	if json.Valid([]byte(s)) {
		return s
	}
	return "{}"
}

func (s *Server) responses(w http.ResponseWriter, hr *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		return
	}
	r, stream, namespaces, err := decodeResponses(body)
	if err != nil {
		s.fail("POST /v1/responses: %v", err)
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
	id := fmt.Sprintf("resp_cotal%06d", r.Seq)
	output := responsesOutput(st, r.Seq, namespaces)
	done := map[string]any{"id": id, "object": "response", "created_at": at.Unix(), "status": "completed", "model": model,
		"output": output, "usage": responsesUsage()}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, compact(done))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	event := func(v map[string]any) {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], compact(v))
	}
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": id, "object": "response", "created_at": at.Unix(),
		"status": "in_progress", "model": model, "output": []any{}}})
	for i, item := range output {
		event(map[string]any{"type": "response.output_item.added", "output_index": i, "item": item})
		if item["type"] == "message" {
			event(map[string]any{"type": "response.output_text.delta", "item_id": item["id"], "output_index": i, "content_index": 0, "delta": st.Text})
		}
		event(map[string]any{"type": "response.output_item.done", "output_index": i, "item": item})
	}
	event(map[string]any{"type": "response.completed", "response": done})
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
}

// responsesOutput is a step as a response's output items: its text as an
// assistant message, then each call as a function call (in its namespace
// when the request offered one the call's name begins with).
func responsesOutput(st Step, seq int, namespaces map[string]bool) []map[string]any {
	var out []map[string]any
	if st.Text != "" || len(st.Calls) == 0 {
		out = append(out, map[string]any{"type": "message", "id": fmt.Sprintf("msg_cotal%06d", seq), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": st.Text, "annotations": []any{}}}})
	}
	for i, c := range st.Calls {
		item := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_cotal%06d_%d", seq, i), "call_id": c.ID, "name": c.Name,
			"arguments": string(c.Input), "status": "completed"}
		for ns := range namespaces {
			if inner, ok := strings.CutPrefix(c.Name, ns+"__"); ok && inner != "" {
				item["namespace"], item["name"] = ns, inner
			}
		}
		out = append(out, item)
	}
	return out
}

func responsesUsage() map[string]any {
	return map[string]any{"input_tokens": 100, "input_tokens_details": map[string]int{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 110}
}
