// Package pty runs one seat's process in a pseudo-terminal, hands its
// output to subscribers as it comes, mirrors it into a terminal emulator
// behind the output (never slowing the program) so the screen can be
// rendered at any time, and writes input into it.
//
// It knows nothing about the mesh: it must never import mesh, broker, tui or
// the seat manager. A [Seat] is a real process in a real pty; everything the
// manager, attach sessions and readiness need from that process (its screen,
// its output stream, its exit, its input) goes through the Seat's methods.
package pty
