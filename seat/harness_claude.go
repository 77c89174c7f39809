package seat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/transcript"
)

// Claude Code in a seat. The manager gives each claude seat a settings
// file of its own (`--settings`: it adds to the user's settings, never
// replaces them) holding the hooks, which run `cotal hook <event>` as the
// seat, and the allow rule that lets the model call its cotal tools
// without asking; the cotal MCP server comes in its own config file
// (`--mcp-config`, added to the user's servers); the persona's prompt is
// a 0600 file (`--append-system-prompt-file`), never an argument.
//
// The hooks tell the seat what Claude Code does: a prompt or a tool call
// is working, a permission prompt or a question is waiting (a permission
// prompt is answered through its hook: cotal approve / deny, the
// dashboard's keys), the end of a turn is idle at its prompt. Messages
// reach the model through the hooks' output: what waits goes out as the
// added context of the session's start and of each prompt, and a DM, task
// or mention waiting when a turn ends keeps the turn going with it.
type claudeHarness struct{}

// Files of a claude seat's launch directory.
const (
	claudeSettingsFile = "claude-settings.json"
	claudeMCPFile      = "mcp.json"
	claudePromptFile   = "persona-prompt.md"
)

// claudeAllow lets the model call every tool of the seat's cotal MCP
// server without a permission prompt, in every permission mode that
// honours allow rules (default and auto included).
const claudeAllow = "mcp__cotal"

// Hook time limits, in seconds as Claude Code reads them. A permission
// prompt's hook waits as long as the person does; the others return at
// once.
const (
	claudeHookTimeout = 30
	claudeAskTimeout  = 24 * 60 * 60
)

// claudeHookEvents are the events the seat's settings hook, with the
// matcher each needs ("" for none).
var claudeHookEvents = []struct{ event, matcher string }{
	{"SessionStart", ""},
	{"UserPromptSubmit", ""},
	{"PreToolUse", "*"},
	{"PermissionRequest", "*"},
	{"PostToolUse", "*"},
	{"PostToolUseFailure", "*"},
	{"Notification", ""},
	{"Stop", ""},
	{"StopFailure", ""},
	{"SessionEnd", ""},
}

// claudeStopCap is how many turns in a row a seat keeps going at their
// end to hand over what waits; Claude Code itself ends a turn after 8
// blocks, and what is still waiting then goes at the next prompt.
const claudeStopCap = 6

func (claudeHarness) launch(l launchCtx) ([]string, []string, error) {
	hooks := map[string]any{}
	for _, e := range claudeHookEvents {
		timeout := claudeHookTimeout
		if e.event == "PermissionRequest" {
			timeout = claudeAskTimeout
		}
		entry := map[string]any{"hooks": []any{map[string]any{
			"type": "command", "command": shellQuote(l.exe) + " hook " + e.event, "timeout": timeout,
		}}}
		if e.matcher != "" {
			entry["matcher"] = e.matcher
		}
		hooks[e.event] = []any{entry}
	}
	settings := filepath.Join(l.dir, claudeSettingsFile)
	if err := writeJSON(settings, map[string]any{
		"permissions": map[string]any{"allow": []string{claudeAllow}},
		"hooks":       hooks,
	}); err != nil {
		return nil, nil, err
	}
	mcp := filepath.Join(l.dir, claudeMCPFile)
	if err := writeJSON(mcp, map[string]any{"mcpServers": map[string]any{
		"cotal": map[string]any{"command": l.exe, "args": []string{"mcp"}},
	}}); err != nil {
		return nil, nil, err
	}
	args := []string{"--settings", settings, "--mcp-config", mcp}
	if prompt := strings.TrimSpace(l.p.Prompt); prompt != "" {
		path := filepath.Join(l.dir, claudePromptFile)
		if err := os.WriteFile(path, []byte(l.p.Prompt), 0o600); err != nil {
			return nil, nil, fmt.Errorf("writing the persona's prompt: %w", err)
		}
		args = append(args, "--append-system-prompt-file", path)
	}
	return args, nil, nil
}

func (claudeHarness) reports() bool { return true }

// sessionAtStart: its SessionStart hook runs as it starts.
func (claudeHarness) sessionAtStart() bool { return true }

// nests: Claude Code's own sandbox (its sandbox setting) is bwrap on Linux.
func (claudeHarness) nests() bool { return true }

// fullScreen: Claude Code may draw its whole UI on the alternate screen.
func (claudeHarness) fullScreen() bool { return true }

// shellQuote quotes s for the shell Claude Code runs a hook command with.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// claudeHookInput is what Claude Code gives a hook on stdin (the fields
// the seat reads).
type claudeHookInput struct {
	SessionID        string          `json:"session_id"`
	Event            string          `json:"hook_event_name"`
	Source           string          `json:"source"`
	ToolName         string          `json:"tool_name"`
	ToolInput        json.RawMessage `json:"tool_input"`
	NotificationType string          `json:"notification_type"`
	Message          string          `json:"message"`
	StopHookActive   bool            `json:"stop_hook_active"`
	AgentID          string          `json:"agent_id"`
	TranscriptPath   string          `json:"transcript_path"`
}

func (c claudeHarness) hook(h *hookCall) (client.HookReply, error) {
	var in claudeHookInput
	if err := json.Unmarshal(h.input, &in); err != nil {
		return client.HookReply{}, fmt.Errorf("its input is not Claude Code's hook JSON: %v", err)
	}
	event, src := h.begin(in.Event, in.SessionID)
	h.readTranscript(transcript.Claude, in.TranscriptPath)
	switch event {
	case "SessionStart":
		// Started, resumed, cleared or compacted: its turn has not begun,
		// and it may still show a dialog, so only its screen can show it
		// at its prompt.
		h.report(agentReport{state: client.AgentIdle, source: src + " (" + in.Source + ")", screenIdle: true})
		return c.context(h, "SessionStart")
	case "UserPromptSubmit":
		h.dismiss("a prompt was submitted")
		h.promptBegan()
		h.report(agentReport{state: client.AgentWorking, source: src})
		return c.context(h, "UserPromptSubmit")
	case "PreToolUse":
		h.confirm()
		h.report(agentReport{state: client.AgentWorking, activity: toolLabel(in.ToolName, in.ToolInput), source: src})
	case "PostToolUse", "PostToolUseFailure":
		h.dismiss("its tool call went ahead")
		h.report(agentReport{state: client.AgentWorking, source: src})
	case "PermissionRequest":
		h.confirm()
		what := "approve " + toolLabel(in.ToolName, in.ToolInput)
		return h.await(client.AskApproval, what, claudeDecision, src)
	case "Notification":
		c.notification(h, in, src)
	case "Stop":
		h.confirm()
		if in.AgentID == "" && h.due() && h.continued(in.StopHookActive, claudeStopCap) {
			if r, err := c.context(h, "Stop"); err != nil || r.Output != "" {
				h.report(agentReport{state: client.AgentWorking, source: src + " (kept going with messages)"})
				return r, err
			}
		}
		h.dismiss("its turn ended")
		h.report(agentReport{state: client.AgentIdle, source: src, atPrompt: true})
	case "StopFailure":
		h.unproven("its model request failed")
		h.dismiss("its turn ended")
		h.report(agentReport{state: client.AgentIdle, source: src, atPrompt: true})
	case "SessionEnd":
		h.unproven("its session ended")
		h.dismiss("its session ended")
	}
	return client.HookReply{}, nil
}

// notification reads what Claude Code tells its person.
func (claudeHarness) notification(h *hookCall, in claudeHookInput, src string) {
	src += " " + in.NotificationType
	switch t := in.NotificationType; {
	case t == "permission_prompt":
		if a := h.agent(); a.ask != nil {
			return // its PermissionRequest hook already said what it asks
		}
		h.report(agentReport{state: client.AgentWaiting, kind: client.AskApproval, asks: oneLabel(in.Message), source: src})
	case strings.Contains(t, "elicitation"): // an MCP server asks the person (elicitation_dialog)
		h.report(agentReport{state: client.AgentWaiting, kind: client.AskQuestion, asks: oneLabel(in.Message), source: src})
	case t == "idle_prompt":
		// Its prompt has sat idle a while: that it waits for its person
		// is no question to answer, and it is at its prompt.
		if a := h.agent(); a.ask == nil && a.state != client.AgentWorking {
			h.report(agentReport{state: client.AgentIdle, source: src, atPrompt: true})
		}
	}
}

// context is the hook's output adding what is due to the model's context,
// nothing when nothing is.
func (claudeHarness) context(h *hookCall, event string) (client.HookReply, error) {
	text, token := h.handOut()
	if text == "" {
		return client.HookReply{}, nil
	}
	out, err := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": event, "additionalContext": text,
	}})
	if err != nil {
		return client.HookReply{}, err
	}
	return client.HookReply{Output: string(out), Token: token}, nil
}

// claudeDecision is a PermissionRequest hook's output for a person's
// answer.
func claudeDecision(decision, message string) string {
	d := map[string]any{"behavior": decision}
	if decision == client.AnswerDeny {
		if message == "" {
			message = "denied by the person at cotal"
		}
		d["message"] = message
	}
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PermissionRequest", "decision": d}})
	return string(b)
}

// toolLabel names a tool call the way Claude Code's prompt does:
// Bash(touch x), Edit(path), or the tool's name.
func toolLabel(name string, input json.RawMessage) string {
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	for _, k := range []string{"command", "file_path", "notebook_path", "url", "pattern", "query", "path"} {
		if v, ok := in[k].(string); ok && v != "" {
			return oneLabel(name + "(" + v + ")")
		}
	}
	return oneLabel(name)
}

// maxLabel bounds what a seat says it asks or runs.
const maxLabel = 160

// oneLabel is s on one line, at most maxLabel characters.
func oneLabel(s string) string {
	s = strings.Join(strings.Fields(wire.Inert(s)), " ")
	if utf8.RuneCountInString(s) > maxLabel {
		r := []rune(s)
		s = string(r[:maxLabel-1]) + "…"
	}
	return s
}

// Claude Code's screen: its prompt is a line starting "❯" right under a
// rule of "─", and a dialog is a rule followed by its question, then a
// choice marked "❯" further down. While a turn runs, a line says "esc to
// interrupt".
const (
	claudeCursor = "❯"
	claudeBusy   = "esc to interrupt"
)

func (claudeHarness) readsScreen() bool { return true }

func (claudeHarness) screen(lines []string) screenRead {
	r := screenRead{known: true}
	prompt, dialog := -1, -1
	for i := 1; i < len(lines); i++ {
		if !isRule(lines[i-1]) {
			continue
		}
		if strings.HasPrefix(lines[i], claudeCursor) {
			prompt = i
			continue
		}
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		for _, l := range lines[i+1:] {
			if strings.HasPrefix(strings.TrimSpace(l), claudeCursor) {
				dialog = i
				break
			}
		}
	}
	if dialog > prompt {
		r.dialog = oneLabel(lines[dialog])
		return r
	}
	if prompt < 0 {
		return r
	}
	for _, l := range lines {
		if strings.Contains(l, claudeBusy) {
			return r
		}
	}
	r.atPrompt = true
	return r
}

// isRule reports whether a line is a horizontal rule of box-drawing
// dashes.
func isRule(l string) bool {
	l = strings.TrimSpace(l)
	return utf8.RuneCountInString(l) >= 20 && strings.Trim(l, "─") == ""
}
