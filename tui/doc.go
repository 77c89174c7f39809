// Package tui is the terminal dashboard of a Cotal space: roster with the
// age of every fact, the NEEDS YOU lane, seats, the channel feed and a
// status bar, plus an input line that sends as the local operator.
//
// It reaches the mesh only through a mesh.Endpoint and the managers only
// through SeatSource (the census and screens) and SeatControl (spawn, stop,
// input, attach sessions), which Managers implements over seat/client, so
// hosting the mesh and being a client of it are the same code. It may
// import seat/client (the managers' commands, no pty code) and
// seat/attach/tty (the attach it runs full screen, as `cotal attach` does),
// and must never import seat, broker or host.
//
// Goroutines: the bubbletea program owns the model; the collector owns the
// mesh reads, the seat census and the selected seat's screen, and hands
// the program one batch per tick (see collect.go). The model tells the
// collector which seat is selected through seatFocus, under its own lock.
// Nothing the model runs in Update waits on the network: sends, seat
// commands and the quit check run as tea.Cmds. An attach runs through
// tea.Exec, which hands it the terminal and blocks the program until the
// person detaches.
package tui
