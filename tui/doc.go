// Package tui is the terminal dashboard of a Cotal space: roster with the
// age of every fact, the NEEDS YOU lane, seats, the channel feed and a
// status bar, plus an input line that sends as the local operator.
//
// It reaches the mesh only through a mesh.Endpoint and the manager only
// through SeatSource, so hosting the mesh and being a client of it are the
// same code. It must never import seat/, broker/ or app/.
//
// Goroutines: the bubbletea program owns the model; the collector owns the
// mesh reads and hands the program one batch per tick (see collect.go).
// Nothing the model runs in Update waits on the network: sends and the
// quit check run as tea.Cmds.
package tui
