package modelserver_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cotal-go/cotal/internal/modelserver"
)

// sse posts body to path and returns the data lines of the stream.
func sse(t *testing.T, s *modelserver.Server, path, body string) []string {
	t.Helper()
	resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s", resp.Status)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// TestResponsesNamespacedTools: Codex's Responses request offers MCP tools
// under a namespace; the script names them whole, the reply calls them as
// the namespace's, the next request's function_call_output carries the
// chain on, and a hook's developer message after the prompt is new
// content.
func TestResponsesNamespacedTools(t *testing.T) {
	s, err := modelserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Chain("dm", modelserver.NewContains("HOOK-CONTEXT"),
		modelserver.Use("mcp__cotal__cotal_dm", `{"to":"alice","text":"pong"}`),
		modelserver.Say("done"))
	tools := `"tools":[{"type":"function","name":"exec_command"},{"type":"namespace","name":"mcp__cotal","tools":[{"type":"function","name":"cotal_dm"}]}]`
	first := `{"type":"message","role":"developer","content":[{"type":"input_text","text":"base instructions"}]},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},` +
		`{"type":"message","role":"developer","content":[{"type":"input_text","text":"HOOK-CONTEXT: a DM"}]}`
	ev := sse(t, s, "/v1/responses", `{"model":"m","stream":true,`+tools+`,"input":[`+first+`]}`)
	var types []string
	var call map[string]any
	for _, d := range ev {
		var e struct {
			Type string         `json:"type"`
			Item map[string]any `json:"item"`
		}
		if err := json.Unmarshal([]byte(d), &e); err != nil {
			t.Fatal(err)
		}
		types = append(types, e.Type)
		if e.Type == "response.output_item.done" {
			call = e.Item
		}
	}
	if got := strings.Join(types, " "); got != "response.created response.output_item.added response.output_item.done response.completed" {
		t.Fatalf("events %s", got)
	}
	if call["type"] != "function_call" || call["namespace"] != "mcp__cotal" || call["name"] != "cotal_dm" || !strings.Contains(call["arguments"].(string), "pong") {
		t.Fatalf("the call %v", call)
	}
	r := s.Requests()[0]
	if !r.HasTool("mcp__cotal__cotal_dm") || r.New != "hi\nHOOK-CONTEXT: a DM" || !strings.Contains(r.System, "base instructions") {
		t.Fatalf("decoded %+v", r)
	}
	id := call["call_id"].(string)
	ev = sse(t, s, "/v1/responses", `{"model":"m","stream":true,`+tools+`,"input":[`+first+
		`,{"type":"function_call","namespace":"mcp__cotal","name":"cotal_dm","arguments":"{}","call_id":"`+id+`"}`+
		`,{"type":"function_call_output","call_id":"`+id+`","output":"sent"}]}`)
	if !strings.Contains(ev[len(ev)-1], `"text":"done"`) || !s.ChainDone("dm") {
		t.Fatalf("second answer %v", ev)
	}
	if r := s.Requests()[1]; r.New != "sent" || r.Messages[len(r.Messages)-2].Calls[0].Name != "mcp__cotal__cotal_dm" {
		t.Fatalf("second request %+v", r)
	}
}

// TestChatCompletionsToolCalls: opencode's Chat Completions stream carries
// the call as a tool_calls delta, finishes with tool_calls, then [DONE];
// the tool message of the next request carries the chain on.
func TestChatCompletionsToolCalls(t *testing.T) {
	s, err := modelserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Chain("dm", modelserver.NewContains("ping"), modelserver.Use("cotal_cotal_dm", `{"to":"a","text":"b"}`), modelserver.Say("done"))
	tools := `"tools":[{"type":"function","function":{"name":"cotal_cotal_dm"}}]`
	ev := sse(t, s, "/v1/chat/completions", `{"model":"m","stream":true,`+tools+`,"messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"ping"}]}]}`)
	if ev[len(ev)-1] != "[DONE]" || !strings.Contains(ev[len(ev)-2], `"finish_reason":"tool_calls"`) {
		t.Fatalf("stream %v", ev)
	}
	var chunk struct {
		Choices []struct {
			Delta struct {
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(ev[1]), &chunk); err != nil || len(chunk.Choices[0].Delta.ToolCalls) != 1 {
		t.Fatalf("chunk %s: %v", ev[1], err)
	}
	c := chunk.Choices[0].Delta.ToolCalls[0]
	if c.Function.Name != "cotal_cotal_dm" || c.ID == "" || !strings.Contains(c.Function.Arguments, `"text":"b"`) {
		t.Fatalf("call %+v", c)
	}
	ev = sse(t, s, "/v1/chat/completions", `{"model":"m","stream":true,`+tools+`,"messages":[{"role":"user","content":"ping"},`+
		`{"role":"assistant","content":null,"tool_calls":[{"id":"`+c.ID+`","type":"function","function":{"name":"cotal_cotal_dm","arguments":"{}"}}]},`+
		`{"role":"tool","tool_call_id":"`+c.ID+`","content":"sent"}]}`)
	if !strings.Contains(strings.Join(ev, "\n"), `"content":"done"`) || !s.ChainDone("dm") {
		t.Fatalf("second answer %v", ev)
	}
	if r := s.Requests()[0]; r.System != "sys" || r.New != "ping" || r.Protocol != "chat" {
		t.Fatalf("decoded %+v", r)
	}
}
