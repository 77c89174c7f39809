package seat

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/transcript"
)

// Codex in a seat, driven through its own hooks. Everything cotal adds
// comes as session flags (`-c key=value`, which Codex layers over the
// user's config.toml without writing it): the cotal MCP server, with the
// seat's COTAL_* variables passed by name (Codex starts MCP servers with
// a stripped environment) and its tools approved in every approval mode;
// and the seat's hooks, each running `cotal hook <event>` as the seat.
//
// Codex runs a non-managed hook only once its person trusted it, keyed by
// where it is configured and its content's hash. The seat's hooks come
// with their trust as session flags too (`hooks.state`), for exactly
// those hooks: the hash is Codex's own, computed here the way Codex
// computes it (a test checks it against the real binary), so a hook of
// the user's that they have not trusted stays untrusted, and nothing is
// written to their config.
//
// The TUI runs without Codex's shared background server (`--no-daemon`),
// so the seat's commands run in the seat, under its sandbox.
//
// The hooks tell the seat what Codex does: a prompt, a tool call or a
// model request is working; a permission request is waiting, held until
// the person answers it from cotal (cotal approve / deny, the dashboard's
// p); the end of a turn is idle at its prompt. Messages reach the model as
// the added context of the session's start and of each prompt, and a DM,
// task or mention waiting when a turn ends keeps the turn going with it
// (its Stop hook blocks with the messages as the reason). The persona's
// prompt rides on the session's start the same way, never on argv. What a
// hook handed over is acked once a model request after it completed (its
// PostModelRequest hook), and comes again marked as a possible repeat if
// that request failed or the turn was interrupted.
type codexHarness struct{ prompt string }

// Hook time limits, in seconds as Codex reads them. A permission request's
// hook waits as long as the person does; Codex cuts SessionEnd and
// Interrupt hooks to 3 s, and the hash of a hook is of its time as cut.
const (
	codexHookTimeout = 30
	codexAskTimeout  = 24 * 60 * 60
	codexEndTimeout  = 3
)

// codexHookEvents are the events the seat's hooks answer, with the matcher
// each needs ("" for none) and its time limit.
var codexHookEvents = []struct {
	event, matcher string
	timeout        int
}{
	{"SessionStart", "", codexHookTimeout},
	{"UserPromptSubmit", "", codexHookTimeout},
	{"PreToolUse", "*", codexHookTimeout},
	{"PermissionRequest", "*", codexAskTimeout},
	{"PostToolUse", "*", codexHookTimeout},
	{"PostModelRequest", "", codexHookTimeout},
	{"Stop", "", codexHookTimeout},
	{"Interrupt", "", codexEndTimeout},
	{"SessionEnd", "", codexEndTimeout},
}

// codexStopCap is how many turns in a row a seat keeps going at their
// end to hand over what waits.
const codexStopCap = 6

// codexFlagsSource is how Codex names the config layer of session flags
// in a hook's key.
const codexFlagsSource = "/<session-flags>/config.toml"

func (c codexHarness) launch(l launchCtx) ([]string, []string, error) {
	hooks, err := codexHooks(l.exe)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(l.knobs))
	for i, k := range l.knobs {
		names[i] = tomlString(k)
	}
	return []string{
		"--no-daemon",
		"-c", "mcp_servers.cotal.command=" + tomlString(l.exe),
		"-c", `mcp_servers.cotal.args=["mcp"]`,
		"-c", "mcp_servers.cotal.env_vars=[" + strings.Join(names, ",") + "]",
		"-c", `mcp_servers.cotal.default_tools_approval_mode="approve"`,
		"-c", "hooks=" + hooks,
	}, nil, nil
}

// codexHooks is the seat's hooks and their trust as one TOML inline table
// for `-c hooks=...`.
func codexHooks(exe string) (string, error) {
	var b strings.Builder
	b.WriteString("{")
	state := make([]string, 0, len(codexHookEvents))
	for _, e := range codexHookEvents {
		command := shellQuote(exe) + " hook " + e.event
		fmt.Fprintf(&b, "%s=[{", e.event)
		if e.matcher != "" {
			fmt.Fprintf(&b, "matcher=%s,", tomlString(e.matcher))
		}
		fmt.Fprintf(&b, "hooks=[{type=\"command\",command=%s,timeout=%d}]}],", tomlString(command), e.timeout)
		hash, err := codexHookHash(e.event, e.matcher, command, e.timeout)
		if err != nil {
			return "", err
		}
		state = append(state, fmt.Sprintf("%s={trusted_hash=%s}", tomlString(codexHookKey(e.event)), tomlString(hash)))
	}
	b.WriteString("state={" + strings.Join(state, ",") + "}}")
	return b.String(), nil
}

// codexHookKey is Codex's key of the seat's hook for an event: its config
// layer, the event, the matcher group's index and the handler's.
func codexHookKey(event string) string {
	return codexFlagsSource + ":" + snakeCase(event) + ":0:0"
}

// codexHookHash is the hash Codex trusts a command hook by: SHA-256 of the
// hook's normalized identity (the event in snake case, the matcher when
// there is one, the one handler with its type, command, time limit and
// async flag) as JSON with sorted keys and nothing escaped that need not
// be, written "sha256:<hex>".
func codexHookHash(event, matcher, command string, timeout int) (string, error) {
	id := map[string]any{
		"event_name": snakeCase(event),
		"hooks":      []any{map[string]any{"type": "command", "command": command, "timeout": timeout, "async": false}},
	}
	if matcher != "" {
		id["matcher"] = matcher
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(id); err != nil {
		return "", err
	}
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// snakeCase is PostToolUse as post_tool_use.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (codexHarness) reports() bool { return true }

// fullScreen: Codex draws its TUI on the alternate screen.
func (codexHarness) fullScreen() bool { return true }

// sessionAtStart: Codex begins its session (and runs SessionStart) with
// its first turn.
func (codexHarness) sessionAtStart() bool { return false }

// nests: Codex runs each command in a bwrap sandbox of its own.
func (codexHarness) nests() bool { return true }

// codexHookInput is what Codex gives a hook on stdin (the fields the seat
// reads).
type codexHookInput struct {
	SessionID      string          `json:"session_id"`
	Event          string          `json:"hook_event_name"`
	Source         string          `json:"source"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	StopHookActive bool            `json:"stop_hook_active"`
	Status         string          `json:"status"`
	Error          json.RawMessage `json:"error"`
	TranscriptPath string          `json:"transcript_path"`
}

func (c codexHarness) hook(h *hookCall) (client.HookReply, error) {
	var in codexHookInput
	if err := json.Unmarshal(h.input, &in); err != nil {
		return client.HookReply{}, fmt.Errorf("its input is not Codex's hook JSON: %v", err)
	}
	event, src := h.begin(in.Event, in.SessionID)
	h.readTranscript(transcript.Codex, in.TranscriptPath)
	switch event {
	case "SessionStart":
		// A session began (with its first turn, or resumed or cleared):
		// the persona's prompt and what waits go into its context.
		return c.context(h, event, strings.TrimSpace(c.prompt))
	case "UserPromptSubmit":
		h.dismiss("a prompt was submitted")
		h.promptBegan()
		h.report(agentReport{state: client.AgentWorking, source: src})
		return c.context(h, event, "")
	case "PreToolUse":
		h.confirm()
		h.report(agentReport{state: client.AgentWorking, activity: toolLabel(in.ToolName, in.ToolInput), source: src})
	case "PostToolUse":
		h.dismiss("its tool call went ahead")
		h.report(agentReport{state: client.AgentWorking, source: src})
	case "PermissionRequest":
		h.confirm()
		return h.await(client.AskApproval, "approve "+toolLabel(in.ToolName, in.ToolInput), claudeDecision, src)
	case "PostModelRequest":
		if in.Status != "completed" {
			h.unproven(fmt.Sprintf("its model request ended %s: %s", dashIfEmpty(in.Status), oneLabel(string(in.Error))))
			break
		}
		h.confirm()
	case "Stop":
		h.confirm()
		if h.due() && h.continued(in.StopHookActive, codexStopCap) {
			if r, err := c.keepGoing(h); err != nil || r.Output != "" {
				h.report(agentReport{state: client.AgentWorking, source: src + " (kept going with messages)"})
				return r, err
			}
		}
		h.dismiss("its turn ended")
		h.report(agentReport{state: client.AgentIdle, source: src, atPrompt: true})
	case "Interrupt":
		// The person stopped the turn (Esc): what no model request proved
		// read comes again; only its screen can show it at its prompt.
		h.unproven("its turn was interrupted")
		h.dismiss("its turn was interrupted")
		h.report(agentReport{state: client.AgentIdle, source: src, screenIdle: true})
	case "SessionEnd":
		h.unproven("its session ended")
		h.dismiss("its session ended")
	}
	return client.HookReply{}, nil
}

// context is the hook's output adding lead (the persona's prompt) and what
// is due to the model's context, nothing when neither is.
func (codexHarness) context(h *hookCall, event, lead string) (client.HookReply, error) {
	text, token := h.handOut()
	parts := make([]string, 0, 2)
	for _, p := range []string{lead, text} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return client.HookReply{}, nil
	}
	out, err := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": event, "additionalContext": strings.Join(parts, "\n\n"),
	}})
	if err != nil {
		return client.HookReply{}, err
	}
	return client.HookReply{Output: string(out), Token: token}, nil
}

// keepGoing is a Stop hook's output that keeps the turn going with what
// is due as its reason, nothing when nothing is.
func (codexHarness) keepGoing(h *hookCall) (client.HookReply, error) {
	text, token := h.handOut()
	if text == "" {
		return client.HookReply{}, nil
	}
	out, err := json.Marshal(map[string]any{"decision": "block", "reason": text})
	if err != nil {
		return client.HookReply{}, err
	}
	return client.HookReply{Output: string(out), Token: token}, nil
}

// Codex's screen: its composer is the last line beginning "›"; a dialog
// puts its numbered choices there ("› 1. Yes, proceed (y)") under its
// question (the text up to its "?", which may go on past it on its line),
// and a review of hooks lists them ("› [!]  1  ..."). While a
// turn runs, a line says "esc to interrupt".
const (
	codexCursor = "›"
	codexBusy   = "esc to interrupt"
)

func (codexHarness) readsScreen() bool { return true }

func (codexHarness) screen(lines []string) screenRead {
	r := screenRead{known: true}
	last := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), codexCursor) {
			last = i
		}
	}
	if last < 0 {
		return r
	}
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[last]), codexCursor))
	if isChoice(rest) {
		r.dialog = oneLabel(rest)
		for i := last - 1; i >= 0 && i >= last-12; i-- {
			q := strings.TrimSpace(lines[i])
			if strings.Contains(q, "needs review") {
				r.dialog = oneLabel(q)
				break
			}
			// The question, up to its mark: "Trust this folder? Codex
			// can read..." is "Trust this folder?".
			if ask, _, ok := strings.Cut(q, "?"); ok && strings.TrimSpace(ask) != "" {
				r.dialog = oneLabel(ask + "?")
				break
			}
		}
		return r
	}
	for _, l := range lines {
		if strings.Contains(l, codexBusy) {
			return r
		}
	}
	r.atPrompt = true
	return r
}

// isChoice reports whether a line after the cursor is a dialog's choice:
// "1. Yes", "[!] 1 ...".
func isChoice(s string) bool {
	if strings.HasPrefix(s, "[") {
		return true
	}
	digits, _, ok := strings.Cut(s, ".")
	if !ok || digits == "" {
		return false
	}
	_, err := strconv.Atoi(digits)
	return err == nil
}
