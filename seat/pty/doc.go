// Package pty runs one seat's process in a pseudo-terminal, mirrors its
// output into a terminal emulator so the current screen can be rendered at
// any time, and writes input into it.
//
// It knows nothing about the mesh: it must never import mesh, broker, tui or
// the seat manager. A [Seat] is a real process in a real pty; everything the
// manager, attach sessions and readiness need from that process (its screen,
// its output stream, its exit, its input) goes through the Seat's methods.
package pty
