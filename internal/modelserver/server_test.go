package modelserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cotal-go/cotal/internal/modelserver"
)

// post sends one Messages request and returns the events of its stream,
// as (event name, data) pairs.
func post(t *testing.T, s *modelserver.Server, body string) [][2]string {
	t.Helper()
	resp, err := http.Post(s.URL()+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s", resp.Status)
	}
	var out [][2]string
	var name string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			out = append(out, [2]string{name, strings.TrimPrefix(line, "data: ")})
		}
	}
	return out
}

const tools = `"tools":[{"name":"ToolSearch"},{"name":"Bash"}]`

// TestChainAnswersInOrder: a chain's first step answers the request whose
// new content triggers it, the next answers the request carrying the
// result of the first step's call, and a request nothing claims gets the
// default text; the stream is the Messages API's.
func TestChainAnswersInOrder(t *testing.T) {
	s, err := modelserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Chain("dm", modelserver.NewContains("ping-7"),
		modelserver.Use("Bash", `{"command":"touch x"}`),
		modelserver.Say("done"))

	ev := post(t, s, `{"model":"m","stream":true,`+tools+`,"messages":[{"role":"user","content":"ping-7 please"}]}`)
	names := make([]string, len(ev))
	for i, e := range ev {
		names[i] = e[0]
	}
	want := "message_start content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events: %s, want %s", got, want)
	}
	var start struct {
		ContentBlock struct{ Type, ID, Name string } `json:"content_block"`
	}
	_ = json.Unmarshal([]byte(ev[1][1]), &start)
	if start.ContentBlock.Type != "tool_use" || start.ContentBlock.Name != "Bash" || start.ContentBlock.ID == "" {
		t.Fatalf("first block %+v, want a Bash tool_use with an id", start.ContentBlock)
	}
	if !strings.Contains(ev[2][1], `touch x`) || !strings.Contains(ev[4][1], `"tool_use"`) {
		t.Fatalf("delta %s / stop %s: want the input and stop reason tool_use", ev[2][1], ev[4][1])
	}
	id := start.ContentBlock.ID
	// The history holds the trigger, but only the tool result is new.
	ev = post(t, s, `{"model":"m","stream":true,`+tools+`,"messages":[{"role":"user","content":"ping-7 please"},`+
		`{"role":"assistant","content":[{"type":"tool_use","id":"`+id+`","name":"Bash","input":{}}]},`+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":"ok"}]}]}`)
	if !strings.Contains(ev[2][1], `"done"`) || !strings.Contains(ev[4][1], "end_turn") {
		t.Fatalf("second answer %v, want the text done and end_turn", ev)
	}
	if !s.ChainDone("dm") {
		t.Fatal("the chain is not done")
	}
	ev = post(t, s, `{"model":"m","stream":true,`+tools+`,"messages":[{"role":"user","content":"ping-7 please"}]}`)
	if !strings.Contains(ev[2][1], "nothing to say") {
		t.Fatalf("a finished chain answered again: %v", ev)
	}
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[0].Chain != "dm" || reqs[1].Chain != "dm" || reqs[2].Chain != "" {
		t.Fatalf("requests %+v", reqs)
	}
	if r, ok := reqs[1].Result(id); !ok || r.Text != "ok" || reqs[1].New != "ok" {
		t.Fatalf("the second request's result %+v (new %q)", r, reqs[1].New)
	}
	if !reqs[0].At.Before(reqs[1].At) || reqs[0].Seq != 1 {
		t.Fatalf("arrival stamps %v %v", reqs[0].At, reqs[1].At)
	}
}

// TestSideAndClassifier: a request without tools (a title) and an
// auto-mode classifier's request are answered apart from the script.
func TestSideAndClassifier(t *testing.T) {
	s, err := modelserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Chain("never", func(*modelserver.Request) bool { return true }, modelserver.Say("scripted"))
	ev := post(t, s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"name this"}]}`)
	if !strings.Contains(ev[2][1], s.SideText) {
		t.Fatalf("side request answered %v", ev)
	}
	ev = post(t, s, `{"model":"m","stream":true,"system":[{"type":"text","text":"You are a security monitor for tool calls."}],`+tools+`,"messages":[{"role":"user","content":"Bash: ls"}]}`)
	if !strings.Contains(ev[2][1], modelserver.ClassifierAllow) {
		t.Fatalf("classifier answered %v", ev)
	}
	if s.ChainDone("never") {
		t.Fatal("a side or classifier request consumed the script")
	}
	kinds := []modelserver.Kind{modelserver.Side, modelserver.Classifier}
	for i, r := range s.Requests() {
		if r.Kind != kinds[i] {
			t.Fatalf("request %d is %s, want %s", i, r.Kind, kinds[i])
		}
	}
}

// TestHeldStep: a held step is sent only once the test releases it, and
// Wait sees the request before.
func TestHeldStep(t *testing.T) {
	s, err := modelserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	release := make(chan struct{})
	s.Chain("slow", modelserver.NewContains("go"), modelserver.Say("late").HeldBy(release))
	got := make(chan [][2]string, 1)
	go func() {
		got <- post(t, s, `{"model":"m","stream":true,`+tools+`,"messages":[{"role":"user","content":"go"}]}`)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.Wait(ctx, func(r *modelserver.Request) bool { return r.Chain == "slow" }); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-got:
		t.Fatalf("answered before release: %v", ev)
	default:
	}
	close(release)
	if ev := <-got; !strings.Contains(ev[2][1], "late") {
		t.Fatalf("answered %v", ev)
	}
}
