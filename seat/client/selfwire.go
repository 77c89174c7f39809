package client

import "github.com/cotal-go/cotal/mesh"

// The wire types of the self commands the seat's MCP server (`cotal mcp`
// inside the seat) reads and steers its connector through; each acts on
// the caller's own seat (the names are wire.ManagerConnector and the
// rest).

// StopArgs stop the caller's own seat: gracefully (SIGTERM, SIGKILL after
// 3 s) unless Graceful is false.
type StopArgs struct {
	Graceful *bool `json:"graceful,omitempty"`
}

// StopReply says the seat is being stopped: the answer goes out before
// the stop, which ends the caller.
type StopReply struct {
	Name     string `json:"name"`
	Stopping bool   `json:"stopping"`
}

// HelloArgs name the MCP client that connected to the seat's `cotal mcp`.
type HelloArgs struct {
	Client string `json:"client,omitempty" schema:"maxLength=200"`
}

// InboxWindowArgs asks for one inbox read.
type InboxWindowArgs struct {
	Peek bool `json:"peek,omitempty"`
}

// AttentionArgs sets the attention mode.
type AttentionArgs struct {
	Attention string `json:"attention" schema:"enum=open|dnd|focus"`
}

// ChannelModeArgs sets one channel's override.
type ChannelModeArgs struct {
	Channel string `json:"channel" schema:"minLength=1,maxLength=4096"`
	Mode    string `json:"mode" schema:"enum=normal|quiet|muted"`
}

// ChannelModeReply is the overrides in force after the change.
type ChannelModeReply struct {
	Modes map[string]mesh.ChannelMode `json:"modes"`
}
