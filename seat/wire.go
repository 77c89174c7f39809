package seat

import "github.com/cotal-go/cotal/seat/client"

// The manager's wire types are defined in seat/client, which the
// dashboard, the CLI and the tests import without the pty runtime. The
// handlers here use them under these names; the command schemas are
// generated from the same structs.

// Endpoint is the manager's endpoint name on the control surface.
const Endpoint = client.Endpoint

// MaxInput bounds the text of one input (spec control.md item 58).
const MaxInput = client.MaxInput

type (
	Row            = client.Row            // one seat as ps reports it
	PsReply        = client.PsReply        // one manager's census
	StatusReply    = client.StatusReply    // the manager's own state
	SpawnArgs      = client.SpawnArgs      // the spawn command's arguments
	Executor       = client.Executor       // the incarnation that runs a spawn
	SpawnAccepted  = client.SpawnAccepted  // the spawn reply
	SpawnSucceeded = client.SpawnSucceeded // the terminal fact of a seat that came up
	NameArgs       = client.NameArgs       // names one seat
	ScreenReply    = client.ScreenReply    // a seat's current screen
	DespawnArgs    = client.DespawnArgs    // stops a seat
	InputArgs      = client.InputArgs      // types text into a seat
	InputReply     = client.InputReply     // the bytes a seat's pty accepted
	InboxArgs      = client.InboxArgs      // a seat's own inbox read
	InboxReply     = client.InboxReply     // what the connector handed over
	InboxItem      = client.InboxItem      // one item of it
	StatusArgs     = client.StatusArgs     // sets a seat's own status
	StatusSet      = client.StatusSet      // the presence after it
	ChannelArgs    = client.ChannelArgs    // names a channel to join or leave
	JoinedReply    = client.JoinedReply    // how a join went
	LeftReply      = client.LeftReply      // whether the seat was on the channel
	PersonasArgs   = client.PersonasArgs   // lists the personas, or one
	PersonaInfo    = client.PersonaInfo    // one persona as a spawner sees it
	PersonasReply  = client.PersonasReply  // the personas of the project
)
