package tui

import (
	"io"
	"time"

	"github.com/cotal-go/cotal/mesh"
)

// Config says what the dashboard shows and as whom it acts.
type Config struct {
	Space   string
	Hosting bool   // this process runs the mesh; quitting stops it
	Mode    string // auth or open
	Sync    string // always or interval
	URL     string // the mesh's URL, for the header
	PID     int    // the pid serving the mesh
	// Follow, for a client, reads where the mesh runs now (its broker
	// record): after a restart the header names the new URL and pid.
	Follow func() (url string, pid int, ok bool)

	// Endpoint is the operator's connection. The dashboard joins ">" on it
	// to read every channel and sends through it. Open it with
	// mesh.Options.Echoes: the operator's identity is shared by every CLI
	// command and dashboard, and their posts belong in the feed.
	Endpoint *mesh.Endpoint

	In  io.Reader // nil: the terminal
	Out io.Writer // nil: the terminal

	// Bell rings the terminal bell once when a seat enters NEEDS YOU.
	Bell bool

	// Notify raises a desktop notification, too, when a seat enters
	// NEEDS YOU; the zero value raises none.
	Notify Notify

	// ConfirmQuit returns the live seats quitting would stop (when
	// hosting); nil or empty quits at once. It runs off the UI goroutine
	// and may block briefly. A client leaves it nil: quitting stops nothing.
	ConfirmQuit func() []string

	// SeatSource is the managers' seat census; nil shows "no manager yet".
	SeatSource SeatSource

	// SeatControl spawns, stops, types into and attaches to seats; nil
	// refuses those keys in words.
	SeatControl SeatControl

	// Diff reads a seat's diff in its worktree for D; nil refuses D in
	// words.
	Diff DiffFunc
	// Review prepares a review of a seat's diff for R; nil refuses R in
	// words.
	Review ReviewFunc

	// DetachKey ends an attach and returns to the dashboard; 0 is
	// tty.DefaultDetachKey (Ctrl-]).
	DetachKey byte

	// Log, when set, is drained into the status bar's last error.
	Log *LogSink

	// Tick is the batch period; 0 means DefaultTick.
	Tick time.Duration
}

// DefaultTick is how often the collector hands the program a batch (15 Hz).
const DefaultTick = time.Second / 15
