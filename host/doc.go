// Package host is the cotal process as one value: a Host locks a space's
// store, starts the embedded broker, provisions the space, mints the local
// operator's creds, runs the delivery service and a seat manager, publishes
// broker.json for clients and, on Close, takes it all down in order. A
// supervise Host is the same type serving only a manager on a mesh another
// process runs. The package also answers whether a space runs and stops it,
// both by the store lock (never by a pid read from a file), and starts a
// mesh in the background (Detach).
//
// Its caller (package main) parses flags, turns signals into a context and
// prints; the rules (when a quit may stop live seats, when a space counts
// as running) live here. It must never import tui or package main.
package host
