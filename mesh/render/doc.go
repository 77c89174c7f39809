// Package render renders mesh values for a person or a model: an inbox item
// as one attributed block, the roster as a table, the age of a fact. The
// CLI, the seat connector's self commands and the MCP server print through
// it, so the same item reads the same everywhere.
//
// It imports mesh/presence and mesh/wire only, so mesh itself may render
// through it (the agent tools do); it never imports mesh, seat, tui, broker
// or the host.
package render
