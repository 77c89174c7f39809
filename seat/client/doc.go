// Package client is the seat manager's commands as a client: the wire
// types the manager's commands take and answer (its command schemas are
// generated from them), and a Client that takes the census over every
// manager, locates a seat, spawns one and follows the spawn to its
// outcome, reads screens, types input, stops seats, and makes the self
// calls a seat's own process makes to its connector. The dashboard, the
// CLI, `cotal mcp` and the tests reach seats through it, exactly as they
// would from another process.
//
// It talks to managers only over the control surface (mesh/ep; their
// command names are mesh/wire's), reads the roster through mesh for an
// agent's census, and must never import seat (the pty runtime), seat/pty,
// tui, broker or host.
package client
