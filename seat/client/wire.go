package client

import (
	"encoding/json"
	"time"

	"github.com/cotal-go/cotal/mesh/wire"
)

// The manager's command arguments and replies. The manager generates each
// command's closed JSON Schema from these structs (proto.SchemaFor), so a
// contract cannot drift from what its handler decodes and returns.

// Row is one seat as ps reports it: the process state and the mesh state
// side by side, each with its time, because they can disagree.
type Row struct {
	Name         string `json:"name"`
	ID           string `json:"id"`
	LifecycleUID string `json:"lifecycleUid"`
	Role         string `json:"role,omitempty"`
	Persona      string `json:"persona"`
	Harness      string `json:"harness"`
	State        string `json:"state"`
	PID          int    `json:"pid"`
	Process      string `json:"process"` // running, exited N, killed SIG
	StartedMs    int64  `json:"startedMs"`
	ExitedMs     int64  `json:"exitedMs,omitempty"`
	LastOutputMs int64  `json:"lastOutputMs,omitempty"`
	Mesh         string `json:"mesh"` // the connector's presence status, or offline
	MeshSinceMs  int64  `json:"meshSinceMs,omitempty"`
	Activity     string `json:"activity,omitempty"`
	GoalID       string `json:"goalId,omitempty"`
	// Sandbox is how the seat is kept from the space's keys and others'
	// creds: "namespace", "landlock" or "unsandboxed: <reason>"; "" until
	// its process has started.
	Sandbox string `json:"sandbox,omitempty"`
	// Nested says why the harness's own sandbox (Codex's bwrap) cannot run
	// in the seat; "" when it can, or the harness has none.
	Nested string `json:"nested,omitempty"`
	// Sessions are the people attached to the seat now.
	Sessions []SessionRow `json:"sessions,omitempty"`
	// Held says why messages wait to be injected into the seat: its
	// person is typing, or left a line unsent; "" when nothing holds them.
	Held string `json:"held,omitempty"`
	// Waiting counts the messages its connector holds, not yet handed to
	// the agent; PullOnly of them are left for the agent's own inbox read
	// (its attention or a quiet channel); the oldest arrived at
	// OldestWaitingMs.
	Waiting         int   `json:"waiting,omitempty"`
	PullOnly        int   `json:"pullOnly,omitempty"`
	OldestWaitingMs int64 `json:"oldestWaitingMs,omitempty"`
	// Stopped says a stop (despawn, the manager closing) asked its process
	// to end, so its exit status, whatever it is, is no crash.
	Stopped bool `json:"stopped,omitempty"`
	// Injects says the seat's arrivals are put in front of its agent;
	// a plain command seat without `inject: true` reads its inbox itself.
	Injects bool `json:"injects,omitempty"`
	// SuspendedMs is when the manager first saw the running process
	// stopped by a signal (SIGSTOP, SIGTSTP): it runs no code until it is
	// continued (SIGCONT). 0 when it is not stopped.
	SuspendedMs int64 `json:"suspendedMs,omitempty"`
	// Agent is what the seat's harness last reported of itself (its
	// hooks): working, waiting on a person and on what, or idle; nil when
	// its harness reports nothing.
	Agent *AgentState `json:"agent,omitempty"`
	// Session is the harness's own session id, as its start reported it
	// (what a resume needs).
	Session string `json:"session,omitempty"`
	// Custody says what holds the seat's process: "keeper" (a process of
	// its own, which outlives the manager; the next one takes it back) or
	// "legacy" (the manager's own process: it ends with the manager).
	Custody string `json:"custody,omitempty"`
	// ReattachedMs is when this manager took the seat back from its
	// keeper (the manager before it had crashed, been killed or let go);
	// DetachedKept and DetachedDropped count the output written while no
	// manager held it (since DetachedSinceMs): the newest kept, the rest
	// dropped.
	ReattachedMs    int64 `json:"reattachedMs,omitempty"`
	DetachedSinceMs int64 `json:"detachedSinceMs,omitempty"`
	DetachedKept    int64 `json:"detachedKept,omitempty"`
	DetachedDropped int64 `json:"detachedDropped,omitempty"`
	// LostMs is when the seat was lost (its keeper went away, taking its
	// terminal), and Lost why; Process then reads "lost".
	LostMs int64  `json:"lostMs,omitempty"`
	Lost   string `json:"lost,omitempty"`
	// EndedAway says the seat's process ended while no manager held it
	// (its keeper recorded how, in Process, and when, in ExitedMs).
	EndedAway bool `json:"endedAway,omitempty"`
	// ResumedMs is when the seat was restarted from a preserved inventory
	// (`cotal down --preserve-state`, then `cotal up`), and ResumedFrom
	// the harness session it resumed ("" when its harness has none).
	ResumedMs   int64  `json:"resumedMs,omitempty"`
	ResumedFrom string `json:"resumedFrom,omitempty"`
	// Worktree is the seat's git worktree; nil when it runs in the
	// project's own checkout.
	Worktree *WorktreeRow `json:"worktree,omitempty"`
	// Usage is the seat's cost and activity as its harness's own session
	// file says them; nil when its harness writes none cotal reads.
	Usage *UsageRow `json:"usage,omitempty"`
}

// UsageRow is a seat's cost and activity, from its harness's transcript.
type UsageRow struct {
	InputTokens      int64   `json:"inputTokens"`
	OutputTokens     int64   `json:"outputTokens"`
	CacheReadTokens  int64   `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64   `json:"cacheWriteTokens,omitempty"`
	CostUSD          float64 `json:"costUsd,omitempty"` // the harness's own reckoning; 0 when it gives none
	ToolCalls        int     `json:"toolCalls"`
	Turns            int     `json:"turns"`
	// LastAnswerMs is when its model's last message was written: how long
	// ago it last made progress. 0 before its first.
	LastAnswerMs int64 `json:"lastAnswerMs,omitempty"`
	// Budget is its persona's budget: in tokens (input, cache writes and
	// output); OverBudget says it is spent. 0 for none.
	Budget     int64  `json:"budget,omitempty"`
	OverBudget bool   `json:"overBudget,omitempty"`
	Error      string `json:"error,omitempty"` // why the transcript could not be read last time
}

// WorktreeRow is a seat's git worktree as ps shows it.
type WorktreeRow struct {
	Path   string `json:"path"`
	Branch string `json:"branch"`
	Base   string `json:"base,omitempty"` // the branch its work merges into
	// Kept says why the worktree stayed when the seat ended: "uncommitted"
	// or "unmerged" work; "" while the seat runs, or when it was clean and
	// removed (Removed).
	Kept    string `json:"kept,omitempty"`
	Removed bool   `json:"removed,omitempty"`
}

// ProcessLost is Row.Process of a seat whose keeper went away.
const ProcessLost = "lost"

// ProcessSuspended is how ps shows a running process stopped by a signal.
const ProcessSuspended = "stopped (signal)"

// SessionRow is one attach session on a seat.
type SessionRow struct {
	ID       string `json:"id"`     // the first characters of the session id, enough to tell sessions apart
	Holder   string `json:"holder"` // owner.actor of whoever attached
	SinceMs  int64  `json:"sinceMs"`
	BytesOut int64  `json:"bytesOut"` // output sent to the holder
	Dropped  int64  `json:"dropped"`  // output dropped because the holder fell behind
	Live     bool   `json:"live"`
}

// AttachArgs asks for an attach session on a seat; the holder is the caller.
type AttachArgs struct {
	Name string `json:"name" schema:"minLength=1,maxLength=64"`
}

// AttachReply is the grant only: a signed, one-use, holder-bound session
// offer, already redeemed and served. Never a URL or a secret.
type AttachReply struct {
	Grant json.RawMessage `json:"grant"`
}

// KeysArgs types named keys into a seat raw, with no paste markers: tmux
// key names (Escape, Enter, C-c, Up, F1...) or single characters.
type KeysArgs struct {
	Name string   `json:"name" schema:"minLength=1,maxLength=64"`
	Keys []string `json:"keys" schema:"minItems=1,maxItems=256"` // at most MaxKeys
}

// Running reports whether the seat's process runs.
func (r Row) Running() bool { return r.Process == ProcessRunning }

// ProcessRunning is Row.Process of a seat whose process runs.
const ProcessRunning = "running"

// PsReply is one manager's census.
type PsReply struct {
	Instance string `json:"instance"`
	Epoch    uint64 `json:"epoch"`
	NowMs    int64  `json:"nowMs"` // the manager's clock, so ages are read against it
	Seats    []Row  `json:"seats"`
}

// StatusReply is the manager's own state.
type StatusReply struct {
	Instance string `json:"instance"`
	Epoch    uint64 `json:"epoch"`
	Seats    int    `json:"seats"`
	Live     int    `json:"live"`
	NowMs    int64  `json:"nowMs"`
}

// SpawnArgs are the spawn command's arguments.
type SpawnArgs struct {
	Persona string `json:"persona" schema:"minLength=1,maxLength=128"`
	Name    string `json:"name,omitempty" schema:"maxLength=64"` // pinned: a collision is refused
	Cwd     string `json:"cwd,omitempty" schema:"maxLength=4096"`
	Role    string `json:"role,omitempty" schema:"maxLength=64"`
	Prompt  string `json:"prompt,omitempty" schema:"maxLength=65536"`
	// ReadinessMs is how long the seat has to come up before the spawn
	// reads uncertain; 0: its persona's, else the manager's.
	ReadinessMs int64 `json:"readinessMs,omitempty" schema:"minimum=0,maximum=3600000"`
	// Worktree runs the seat in a git worktree of its own (as the
	// persona's worktree: true does), on Branch (default cotal/<seat>; an
	// existing branch named here is checked out) made from Base (default
	// the main checkout's HEAD).
	Worktree bool   `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty" schema:"maxLength=255"`
	Base     string `json:"base,omitempty" schema:"maxLength=255"`
}

// PersonasArgs lists the personas a manager spawns from, or only the one
// named.
type PersonasArgs struct {
	Name string `json:"name,omitempty" schema:"maxLength=128"`
}

// PersonaInfo is one persona as a spawner chooses among them: what it
// runs and with which rights. It never carries the prompt, the
// environment or the launch command of the agent file.
type PersonaInfo struct {
	Name           string   `json:"name"`
	Role           string   `json:"role,omitempty"`
	Description    string   `json:"description,omitempty"`
	Harness        string   `json:"harness,omitempty"`
	Capabilities   []string `json:"capabilities,omitempty"`
	Subscribe      []string `json:"subscribe,omitempty"`
	AllowSubscribe wire.ACL `json:"allowSubscribe,omitempty"` // left out: none, as [] is
	AllowPublish   wire.ACL `json:"allowPublish,omitempty"`
	// Error says why a spawn of it would be refused now (the file does
	// not check, its harness is not installed); "" when it would start.
	Error string `json:"error,omitempty"`
}

// PersonaChoice is one persona of the local project as a person picking
// one to spawn sees it (the dashboard's picker): what runs and whether
// messages are typed in, or why no seat can be spawned from it.
type PersonaChoice struct {
	Name    string
	Harness string // claude, codex, opencode or command; "" when unreadable
	Typed   bool   // messages are typed into its seats' terminals
	Invalid string // why no seat can be spawned from it; "" when one can
}

// PersonasReply is the personas of the manager's project, by name.
type PersonasReply struct {
	Personas []PersonaInfo `json:"personas"`
}

// SpawnProgress is the data of a spawn goal's progress event.
type SpawnProgress struct {
	Step string `json:"step"`          // StepLaunched or StepReady
	PID  int    `json:"pid,omitempty"` // the seat's process, from StepLaunched on
}

// The steps of a spawn.
const (
	StepLaunched = "launched" // its process started
	StepReady    = "ready"    // it drew its first output and kept running: it joins the mesh
)

// Executor names the manager incarnation that runs a spawn.
type Executor struct {
	LifecycleUID string `json:"lifecycleUid"`
	Epoch        uint64 `json:"epoch"`
}

// SpawnAccepted is the spawn reply: who the seat will be and which goal
// reports how it went. It carries no secret.
type SpawnAccepted struct {
	Name                string   `json:"name"`
	Owner               string   `json:"owner"`
	Actor               string   `json:"actor"`
	UID                 string   `json:"uid"`
	GoalID              string   `json:"goalId"`
	Fingerprint         string   `json:"fingerprint"`
	ReadinessDeadlineMs int64    `json:"readinessDeadlineMs"`
	Executor            Executor `json:"executor"`
}

// SpawnSucceeded is the terminal fact of a seat that came up.
type SpawnSucceeded struct {
	Name         string `json:"name"`
	Agent        string `json:"agent"`
	ID           string `json:"id"`
	Mode         string `json:"mode"`
	LifecycleUID string `json:"lifecycleUid"`
	Role         string `json:"role,omitempty"`
	PID          int    `json:"pid"`
}

// NameArgs names one seat.
type NameArgs struct {
	Name string `json:"name" schema:"minLength=1,maxLength=64"`
}

// MaxScreenWait is the longest a screen call waits for its text, of at
// most MaxScreenUntil characters.
const (
	MaxScreenWait  = 30 * time.Second
	MaxScreenUntil = 1024
)

// ScreenArgs names a seat and, with Until, the text its screen is to show:
// the manager answers the first screen that shows it, or after WaitMs
// (default 10 s) the last one it saw, or the final screen of a seat whose
// output ended.
type ScreenArgs struct {
	Name   string `json:"name" schema:"minLength=1,maxLength=64"`
	Until  string `json:"until,omitempty" schema:"maxLength=1024"`
	WaitMs int64  `json:"waitMs,omitempty" schema:"minimum=0,maximum=30000"`
}

// ScreenReply is a seat's current screen as text. Matched is set when the
// call waited Until: whether the screen shows it.
type ScreenReply struct {
	Name         string `json:"name"`
	Screen       string `json:"screen"`
	Running      bool   `json:"running"`
	LastOutputMs int64  `json:"lastOutputMs,omitempty"`
	Matched      *bool  `json:"matched,omitempty"`
}

// DespawnArgs stops a seat: gracefully (SIGTERM, SIGKILL after 3 s) unless
// Graceful is false.
type DespawnArgs struct {
	Name     string `json:"name" schema:"minLength=1,maxLength=64"`
	Graceful *bool  `json:"graceful,omitempty"`
}

// MaxKeys is the most keys one keys command takes.
const MaxKeys = 256

// MaxInput bounds the text of one input (spec control.md item 58).
const MaxInput = 65536

// OnlyOperatorTypes is what every refusal to type into a seat says to a
// caller that is not the operator: input and keys are minted to no agent.
const OnlyOperatorTypes = "only the operator may type into a seat"

// InputArgs types text into a seat, then Enter unless Enter is false.
type InputArgs struct {
	Name  string `json:"name" schema:"minLength=1,maxLength=64"`
	Text  string `json:"text" schema:"minLength=1,maxLength=65536"`
	Enter *bool  `json:"enter,omitempty"`
}

// InputReply says how many bytes the seat's pty accepted.
type InputReply struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

// InboxArgs reads the seat's own inbox; Peek gives everything back.
type InboxArgs struct {
	Peek bool `json:"peek,omitempty"`
}

// InboxReply is what the seat's connector handed over.
type InboxReply struct {
	Items []InboxItem `json:"items"`
}

// InboxItem is one item handed to a seat's own inbox read.
type InboxItem struct {
	Kind       string `json:"kind"`
	Line       string `json:"line"` // rendered so peer text cannot forge a line
	Historical bool   `json:"historical,omitempty"`
}

// StatusArgs sets the seat's own status and activity.
type StatusArgs struct {
	Status   string  `json:"status,omitempty" schema:"enum=idle|waiting|working"`
	Activity *string `json:"activity,omitempty" schema:"maxLength=200"`
}

// StatusSet is the seat's presence after a set-status.
type StatusSet struct {
	Status   string `json:"status"`
	Activity string `json:"activity"`
}

// ChannelArgs names a channel to join or leave.
type ChannelArgs struct {
	Channel string `json:"channel" schema:"minLength=1,maxLength=4096"`
}

// JoinedReply says how a seat's join went.
type JoinedReply struct {
	Joined  bool   `json:"joined"`
	Durable bool   `json:"durable"`
	Summary string `json:"summary"`
}

// LeftReply says whether the seat was on the channel.
type LeftReply struct {
	Left bool `json:"left"`
}
