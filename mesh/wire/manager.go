package wire

// ManagerEndpoint is the seat manager's endpoint on the control surface.
// Its commands are named here, where the broker grants them and both the
// manager (seat) and its clients (seat/client) take them; their arguments
// and replies are seat/client's wire types.
const ManagerEndpoint = "manager"

// The manager's commands.
const (
	ManagerSpawn    = "spawn"    // start a seat from a persona; a goal follows it
	ManagerPersonas = "personas" // the personas a spawner may start seats from
	ManagerStatus   = "status"   // the manager's own state
	ManagerPs       = "ps"       // its seats
	ManagerInspect  = "inspect"  // one seat's row
	ManagerScreen   = "screen"   // one seat's screen as text
	ManagerDespawn  = "despawn"  // stop a seat
	ManagerInput    = "input"    // type text into a seat
	ManagerKeys     = "keys"     // type named keys into a seat
	ManagerAttach   = "attach"   // an attach session on a seat
	ManagerAnswer   = "answer"   // the operator answers what a seat waits on (approve or deny)

	// A seat's own process calls these about itself; its connector in
	// the manager answers them.
	ManagerInbox        = "inbox"         // the seat's inbox
	ManagerSetStatus    = "set-status"    // its status and activity
	ManagerJoin         = "join"          // join a channel
	ManagerLeave        = "leave"         // leave one
	ManagerStop         = "stop"          // stop the caller's own seat
	ManagerConnector    = "connector"     // the connector's state: channels, modes, presence, pending
	ManagerInboxWindow  = "inbox-window"  // one inbox read for a model
	ManagerSetAttention = "set-attention" // the global attention mode, mirrored to presence
	ManagerChannelMode  = "channel-mode"  // a per-channel override: normal, quiet or muted
	ManagerHello        = "hello"         // the seat's MCP server has a client: a harness seat is ready
	ManagerHook         = "hook"          // a harness hook: its event and input; the reply is what the hook prints
	ManagerHookWait     = "hook-wait"     // a hook still waiting on a person asks again
	ManagerHookDone     = "hook-done"     // a hook wrote its output (or was stopped): what it handed over is settled
)

// ManagerSelfCommands are the manager commands every agent may call about
// itself (the broker vouches for the caller through the subject): its
// connector answers them.
var ManagerSelfCommands = []string{ManagerInbox, ManagerSetStatus, ManagerJoin, ManagerLeave, ManagerConnector, ManagerInboxWindow,
	ManagerSetAttention, ManagerChannelMode, ManagerHello, ManagerStop, ManagerHook, ManagerHookWait, ManagerHookDone}

// ManagerSpawnCommands are the untargeted manager commands a
// spawn-capable agent may call: spawn, and list the personas it may spawn
// from.
var ManagerSpawnCommands = []string{ManagerSpawn, ManagerPersonas}

// ManagerOwnerCommands are the manager commands a spawn-capable agent may
// call in owner mode, on the seats it spawned (the manager refuses any
// other).
var ManagerOwnerCommands = []string{ManagerInspect, ManagerScreen, ManagerDespawn, ManagerAttach}
