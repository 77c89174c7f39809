// Package attach is the attach session protocol: a person's terminal
// joined to a seat's pty over the mesh. It holds the signed one-use grant
// and the registry that issues and redeems it, the session subjects and the
// broker permission rows that bind them to the grant's holder, the
// credit-windowed rail both sides speak, and the server and client
// sessions that carry terminal data over it.
//
// It imports mesh/ep, mesh/wire and nats.go. It must never import tui,
// broker, host or seat/pty: the server reaches a seat only through the
// [Terminal] interface, which *pty.Seat satisfies.
package attach
