package seat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cotal-go/cotal/seat/client"
)

// opencode in a seat, driven through a plugin of cotal's. Everything cotal
// adds comes in OPENCODE_CONFIG_CONTENT, the inline config opencode merges
// over all its others (the user's global file, OPENCODE_CONFIG, the
// project's): the cotal MCP server, an allow rule for its tools, the
// persona's prompt as an instruction file, and the plugin, a file in the
// seat's launch directory. The user's files, and their own
// OPENCODE_CONFIG and OPENCODE_CONFIG_CONTENT, stay theirs: an inline
// config of theirs is kept, with cotal's keys added to it.
//
// The plugin hands opencode's events to the seat as `cotal hook <event>`:
// a message submitted is a turn beginning, and what waits goes into it as a
// part of the message; a tool call is working; a permission asked is
// waiting, and the person's answer from cotal goes back through opencode's
// own API; an assistant message completed proves the model had what the
// turn carried, one that failed puts it back; the session going idle is
// idle at its prompt.
type opencodeHarness struct{ prompt string }

// Files of an opencode seat's launch directory.
const (
	opencodePluginFile = "cotal-opencode.js"
	opencodePromptFile = "persona-prompt.md"
)

// opencodeAllow lets the model call the seat's cotal tools (opencode
// names them <server>_<tool>) without asking, whatever the user's rules.
const opencodeAllow = "cotal_*"

func (o opencodeHarness) launch(l launchCtx) ([]string, []string, error) {
	plugin := filepath.Join(l.dir, opencodePluginFile)
	exe, _ := json.Marshal(l.exe)
	if err := os.WriteFile(plugin, []byte(strings.Replace(opencodePlugin, "__COTAL__", string(exe), 1)), 0o600); err != nil {
		return nil, nil, fmt.Errorf("writing the opencode plugin: %w", err)
	}
	ours := map[string]any{
		"mcp":        map[string]any{"cotal": map[string]any{"type": "local", "command": []string{l.exe, "mcp"}, "enabled": true}},
		"permission": map[string]any{opencodeAllow: "allow"},
		"plugin":     []any{"file://" + plugin},
	}
	if strings.TrimSpace(o.prompt) != "" {
		path := filepath.Join(l.dir, opencodePromptFile)
		if err := os.WriteFile(path, []byte(o.prompt), 0o600); err != nil {
			return nil, nil, fmt.Errorf("writing the persona's prompt: %w", err)
		}
		ours["instructions"] = []any{path}
	}
	cfg := map[string]any{}
	if theirs := l.env("OPENCODE_CONFIG_CONTENT"); strings.TrimSpace(theirs) != "" {
		if err := json.Unmarshal([]byte(theirs), &cfg); err != nil {
			return nil, nil, fmt.Errorf("OPENCODE_CONFIG_CONTENT is not a JSON object, so cotal cannot add its MCP server to it: %v", err)
		}
	}
	mergeConfig(cfg, ours)
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, nil, err
	}
	return nil, []string{"OPENCODE_CONFIG_CONTENT=" + string(b)}, nil
}

// mergeConfig adds ours to cfg: objects merged key by key (ours winning on
// a key both set), lists appended to, anything else ours.
func mergeConfig(cfg, ours map[string]any) {
	for k, v := range ours {
		switch v := v.(type) {
		case map[string]any:
			if have, ok := cfg[k].(map[string]any); ok {
				mergeConfig(have, v)
				continue
			}
		case []any:
			if have, ok := cfg[k].([]any); ok {
				cfg[k] = append(have, v...)
				continue
			}
		}
		cfg[k] = v
	}
}

func (opencodeHarness) reports() bool        { return true }
func (opencodeHarness) fullScreen() bool     { return true }
func (opencodeHarness) sessionAtStart() bool { return false }
func (opencodeHarness) nests() bool          { return false }

// opencodeHookInput is what the plugin hands a hook (the fields the seat
// reads).
type opencodeHookInput struct {
	Event      string          `json:"event"`
	SessionID  string          `json:"session_id"`
	Tool       string          `json:"tool"`
	Args       json.RawMessage `json:"args"`
	Permission string          `json:"permission"`
	Patterns   []string        `json:"patterns"`
	Error      string          `json:"error"`
}

func (o opencodeHarness) hook(h *hookCall) (client.HookReply, error) {
	var in opencodeHookInput
	if err := json.Unmarshal(h.input, &in); err != nil {
		return client.HookReply{}, fmt.Errorf("its input is not the cotal plugin's JSON: %v", err)
	}
	src := "plugin " + h.event
	h.session(in.SessionID)
	switch h.event {
	case "TurnStart":
		h.dismiss("a message was submitted")
		h.promptBegan()
		h.report(agentReport{state: client.AgentWorking, source: src})
		text, token := h.handOut()
		return client.HookReply{Output: text, Token: token}, nil
	case "Tool":
		h.confirm()
		h.report(agentReport{state: client.AgentWorking, activity: toolLabel(capitalized(in.Tool), in.Args), source: src})
	case "ToolDone":
		h.dismiss("its tool call went ahead")
		h.report(agentReport{state: client.AgentWorking, source: src})
	case "Permission":
		h.confirm()
		what := opencodeAsk(in.Permission, in.Patterns)
		return h.await(client.AskApproval, what, opencodeDecision, src)
	case "PermissionReplied":
		h.dismiss("it was answered")
	case "ModelDone":
		if in.Error != "" {
			h.unproven("its model request failed: " + oneLabel(in.Error))
			break
		}
		h.confirm()
	case "Idle":
		h.dismiss("its turn ended")
		h.report(agentReport{state: client.AgentIdle, source: src, atPrompt: true})
	case "Error":
		h.unproven("its session failed: " + oneLabel(in.Error))
	}
	return client.HookReply{}, nil
}

// opencodeDecision is what the plugin sends opencode for a person's answer.
func opencodeDecision(decision, message string) string {
	reply := "once"
	if decision == client.AnswerDeny {
		reply = "reject"
	}
	b, _ := json.Marshal(map[string]string{"reply": reply, "message": message})
	return string(b)
}

// capitalized is bash as Bash.
// opencodePermissions names opencode's permission kinds whose own name
// reads badly in a person's list.
var opencodePermissions = map[string]string{
	"external_directory": "Outside its directory",
	"doom_loop":          "Repeated tool call",
	"webfetch":           "WebFetch",
	"websearch":          "WebSearch",
	"codesearch":         "CodeSearch",
	"todowrite":          "TodoWrite",
}

// opencodeAsk is what an opencode permission request asks of a person, as
// NEEDS YOU lists it: "approve Bash(touch x)".
func opencodeAsk(permission string, patterns []string) string {
	kind, ok := opencodePermissions[permission]
	if !ok {
		kind = capitalized(strings.ReplaceAll(permission, "_", " "))
	}
	return "approve " + oneLabel(kind+"("+strings.Join(patterns, " ")+")")
}

func capitalized(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// opencode's screen: its prompt box ends in a line of "╹▀▀▀" (its hint
// "Ask anything" shows only before a session's first message); a
// permission request draws "Permission required" in its place; while a
// turn runs, a line says "esc interrupt".
const (
	opencodeBoxEdge = "╹▀"
	opencodeBusy    = "esc interrupt"
	opencodeAsks    = "Permission required"
)

func (opencodeHarness) readsScreen() bool { return true }

func (opencodeHarness) screen(lines []string) screenRead {
	r := screenRead{known: true}
	prompt := false
	for _, l := range lines {
		switch t := strings.TrimSpace(l); {
		case strings.Contains(t, opencodeAsks):
			r.dialog = opencodeAsks
			return r
		case strings.Contains(t, opencodeBusy):
			return r
		case strings.HasPrefix(t, opencodeBoxEdge):
			prompt = true
		}
	}
	r.atPrompt = prompt
	return r
}

// opencodePlugin is the plugin cotal writes into an opencode seat's launch
// directory (__COTAL__ becomes the cotal binary's path). It keeps one
// `cotal hook --stream` for the whole session, started with the plugin
// and so connected before the first event, and hands it each event it
// cares about as a line of JSON; the answer line to a message's event is
// what to add to it, to a permission's the person's answer. If that
// process fails, each event from then on runs a `cotal hook <event>` of
// its own, with the event as JSON on its stdin.
const opencodePlugin = `// cotal's plugin for an opencode seat: it tells the seat what opencode
// does through ` + "`cotal hook`" + `, and hands the seat's messages to the model.
import { spawn } from "node:child_process"

const cotal = __COTAL__

// once is one event in a hook process of its own.
function once(event, input) {
  return new Promise((resolve) => {
    let out = ""
    let child
    try {
      child = spawn(cotal, ["hook", event], { stdio: ["pipe", "pipe", "inherit"] })
    } catch (e) {
      resolve("")
      return
    }
    child.stdout.on("data", (d) => { out += d })
    child.on("error", () => resolve(""))
    child.on("close", () => resolve(out))
    child.stdin.end(JSON.stringify({ event, ...input }))
  })
}

// The stream: one cotal process answering every event, each by its id.
// Once it is gone, every event goes through once; an event it had not
// answered is answered empty, as a hook that died would be.
let stream = null
let streamGone = false
function openStream() {
  let child
  try {
    child = spawn(cotal, ["hook", "--stream"], { stdio: ["pipe", "pipe", "inherit"] })
  } catch (e) {
    streamGone = true
    return
  }
  const s = { child, pending: new Map(), next: 1 }
  // No more events go to it once it fails; what it had not answered is
  // answered empty only once its output is all read (close), so that an
  // answer it wrote is never dropped.
  const gone = () => {
    if (stream === s) stream = null
    streamGone = true
  }
  const lost = () => {
    gone()
    for (const resolve of s.pending.values()) resolve("")
    s.pending.clear()
  }
  child.on("error", lost)
  child.on("close", lost)
  child.stdin.on("error", gone)
  let buf = ""
  child.stdout.on("data", (d) => {
    buf += d
    let nl
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      let a
      try { a = JSON.parse(line) } catch (e) { continue }
      const resolve = s.pending.get(a.id)
      if (!resolve) continue
      s.pending.delete(a.id)
      resolve(a.output || "")
    }
  })
  stream = s
}

function hook(event, input) {
  if (!stream && !streamGone) openStream()
  const s = stream
  if (!s) return once(event, input)
  return new Promise((resolve) => {
    const id = s.next++
    s.pending.set(id, resolve)
    try {
      s.child.stdin.write(JSON.stringify({ id, event, input: { event, ...input } }) + "\n")
    } catch (e) {
      s.pending.delete(id)
      resolve("")
    }
  })
}

export const CotalSeat = async ({ client }) => {
  openStream()
  const status = {}
  const done = new Set()
  // Events go to the seat in the order they came: through the stream, the
  // order they are written in (it hands each over in turn); with a hook
  // per event, each waits for the one before.
  let chain = Promise.resolve()
  const ordered = (event, input) => {
    if (stream) return hook(event, input)
    const p = chain.then(() => hook(event, input))
    chain = p.catch(() => {})
    return p
  }
  // A permission waits for its person apart, so that nothing else waits
  // behind it; through the stream it is still handed over in its turn.
  const answer = async (p) => {
    const out = await hook("Permission", { session_id: p.sessionID, permission: p.permission, patterns: p.patterns || [] })
    if (out.trim() === "") return
    const a = JSON.parse(out)
    await client.postSessionIdPermissionsPermissionId({
      path: { id: p.sessionID, permissionID: p.id },
      body: { response: a.reply, message: a.message || undefined },
    })
  }
  return {
    "chat.message": async (input, output) => {
      const text = await ordered("TurnStart", { session_id: input.sessionID })
      if (text.trim() === "") return
      output.parts.push({
        id: "prt_cotal" + Date.now().toString(36) + Math.random().toString(36).slice(2, 8),
        sessionID: input.sessionID, messageID: output.message.id,
        type: "text", text, synthetic: true,
      })
    },
    "tool.execute.before": async (input, output) => {
      // The tool waits for nothing of cotal's through the stream, where a
      // permission it asks for comes after this in any case; a hook of
      // its own must be done first, or the permission's could pass it.
      const streamed = !!stream
      const told = ordered("Tool", { session_id: input.sessionID, tool: input.tool, args: output.args })
      if (!streamed) await told
    },
    "tool.execute.after": async (input) => {
      ordered("ToolDone", { session_id: input.sessionID, tool: input.tool })
    },
    event: async ({ event }) => {
      const p = event.properties || {}
      switch (event.type) {
        case "permission.asked":
          answer(p).catch(() => {})
          return
        case "permission.replied":
          ordered("PermissionReplied", { session_id: p.sessionID })
          return
        case "message.updated": {
          const m = p.info || {}
          if (m.role !== "assistant" || done.has(m.id) || (!(m.time && m.time.completed) && !m.error)) return
          done.add(m.id)
          ordered("ModelDone", { session_id: m.sessionID, error: m.error ? JSON.stringify(m.error) : "" })
          return
        }
        case "session.status": {
          const s = (p.status && p.status.type) || ""
          if (status[p.sessionID] === s) return
          status[p.sessionID] = s
          if (s === "idle") ordered("Idle", { session_id: p.sessionID })
          return
        }
        case "session.error":
          ordered("Error", { session_id: p.sessionID, error: JSON.stringify(p.error || {}) })
          return
      }
    },
  }
}
`
