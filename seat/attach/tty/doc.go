// Package tty joins a person's terminal to a seat's attach session: raw
// mode with every key passed through but the detach key, the window size
// on entry and on every SIGWINCH, a fresh grant and a repaint after a lost
// connection, and the terminal restored however the attach ends (detach,
// the seat's exit, an error, a signal, a panic). `cotal attach` and the
// dashboard both run it.
//
// It imports seat/attach, seat/client, mesh/ep and mesh/wire. It must never import
// seat, seat/pty, tui, broker or host.
package tty
