package client

import "encoding/json"

// What a seat's harness reports of itself, and the wire types of what it
// reports through: its hooks (`cotal hook <event>` inside the seat) reach
// the seat's connector in self mode (wire.ManagerHook, ManagerHookWait,
// ManagerHookDone), and a person answers what it waits on through the
// operator's answer command (wire.ManagerAnswer).

// Agent states a harness reports (AgentState.State).
const (
	AgentWorking = "working" // in a turn
	AgentWaiting = "waiting" // on a person: a permission prompt, a question, a dialog
	AgentIdle    = "idle"    // its turn ended; at its own prompt when AtPrompt says so
)

// What a waiting harness waits on (AgentState.Kind).
const (
	AskApproval = "approval" // a permission prompt for a tool call
	AskQuestion = "question" // the harness or a tool asks the person something (an elicitation)
	AskDialog   = "dialog"   // a start-up, trust or update dialog
	AskInput    = "input"    // its prompt has sat idle waiting for the person
)

// AgentState is what a seat's harness itself last said it is doing, with
// when and through what. It is nil for a seat whose harness reports
// nothing (a plain command).
type AgentState struct {
	State   string `json:"state"`          // working, waiting or idle
	Kind    string `json:"kind,omitempty"` // when waiting: approval, question, dialog or input
	Asks    string `json:"asks,omitempty"` // when waiting: what it asks, for a person ("approve Bash(touch x)")
	SinceMs int64  `json:"sinceMs"`
	Source  string `json:"source"` // what said so: "hook PermissionRequest", "screen", ...
	// AtPrompt says the harness sits idle at its own prompt, as its own
	// reports prove it: only then may a short nudge be typed into it.
	AtPrompt bool `json:"atPrompt,omitempty"`
	// Answerable says the person may answer what it asks with the answer
	// command (cotal approve / deny, the dashboard's keys); otherwise they
	// answer by attaching.
	Answerable bool `json:"answerable,omitempty"`
}

// MaxHookInput bounds a hook's input as the hook command forwards it.
const MaxHookInput = 1 << 20

// HookArgs is one hook event as the harness gave it to `cotal hook`.
type HookArgs struct {
	Event string          `json:"event" schema:"minLength=1,maxLength=64"`
	Input json.RawMessage `json:"input,omitempty"`
}

// HookReply is what the hook prints, and what it must do next.
type HookReply struct {
	// Output is the hook's stdout ("" for none).
	Output string `json:"output,omitempty"`
	// Token names what this reply handed over or waits on: the hook
	// reports back with hook-done once Output is written (or it was
	// stopped), or asks again with hook-wait while Waiting.
	Token string `json:"token,omitempty"`
	// Waiting says a person has not answered yet: ask again (hook-wait).
	Waiting bool `json:"waiting,omitempty"`
}

// HookWaitArgs asks again for the answer a hook waits on.
type HookWaitArgs struct {
	Token string `json:"token" schema:"minLength=1,maxLength=64"`
}

// HookDoneArgs says how a hook ended: it wrote the reply's output, or it
// was stopped (by its harness) before it could.
type HookDoneArgs struct {
	Token   string `json:"token" schema:"minLength=1,maxLength=64"`
	Written bool   `json:"written"`
	Why     string `json:"why,omitempty" schema:"maxLength=500"` // why it was not written
}

// Answers to what a seat waits on.
const (
	AnswerAllow = "allow"
	AnswerDeny  = "deny"
)

// AnswerArgs answers what a seat waits on.
type AnswerArgs struct {
	Name     string `json:"name" schema:"minLength=1,maxLength=64"`
	Decision string `json:"decision" schema:"enum=allow|deny"`
	Message  string `json:"message,omitempty" schema:"maxLength=2000"` // told to the model with a deny
}

// AnswerReply says what was answered.
type AnswerReply struct {
	Name     string `json:"name"`
	Decision string `json:"decision"`
	Asked    string `json:"asked"` // what the seat had asked
}
