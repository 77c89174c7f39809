package clirender

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// DownJSON is `cotal down --json`: Stopped is false when the mesh was not
// running.
type DownJSON struct {
	Space        string   `json:"space"`
	Stopped      bool     `json:"stopped"`
	PID          int      `json:"pid,omitempty"`
	SeatsStopped []string `json:"seatsStopped"`
	SeatsKept    []string `json:"seatsKept,omitempty"` // left running in their keepers (--keep-seats)
}

// Down says what a bare down did.
func Down(w io.Writer, d DownJSON) {
	switch {
	case !d.Stopped:
		fmt.Fprintf(w, "mesh %s is not running\n", d.Space)
	case len(d.SeatsKept) > 0:
		fmt.Fprintf(w, "mesh %s stopped (pid %d); %d seat(s) run on in their keepers for the next up: %s\n", d.Space, d.PID, len(d.SeatsKept), strings.Join(d.SeatsKept, ", "))
	default:
		fmt.Fprintf(w, "mesh %s stopped (pid %d)\n", d.Space, d.PID)
	}
}

// SeatsStopped says which seats down stopped before the mesh.
func SeatsStopped(w io.Writer, stopped []string) {
	fmt.Fprintf(w, "stopped %d seat(s): %s\n", len(stopped), strings.Join(stopped, ", "))
}

// LiveSeats refuses a bare down while seats run, saying how to go on.
func LiveSeats(w io.Writer, live []string) {
	fmt.Fprintf(w, "cotal: %d seat(s) still running: %s\nstop them with `cotal stop <name>`, stop everything with `cotal down --with-agents`, or leave them running for the next up with `cotal down --keep-seats`\n", len(live), strings.Join(live, ", "))
}

// DownFileJSON is `cotal down -f --json`.
type DownFileJSON struct {
	Space        string   `json:"space"`
	SeatsStopped []string `json:"seatsStopped"`
	Stopped      bool     `json:"stopped"` // the mesh too
	Kept         string   `json:"kept,omitempty"`
	PID          int      `json:"-"`
	// Why is why down -f did nothing: "none" (nothing was started from a
	// manifest), "down" (the mesh is not running); "" when it ran.
	Why string `json:"-"`
}

// DownFile says what down -f did, past the seats it stopped.
func DownFile(w io.Writer, d DownFileJSON) {
	switch {
	case d.Why == "none":
		fmt.Fprintf(w, "nothing was started from a manifest in space %s\n", d.Space)
	case d.Why == "down":
		fmt.Fprintf(w, "mesh %s is not running\n", d.Space)
	case d.Stopped:
		fmt.Fprintf(w, "mesh %s stopped (pid %d)\n", d.Space, d.PID)
	default:
		fmt.Fprintf(w, "mesh %s keeps running: %s\n", d.Space, d.Kept)
	}
}

// Stopping says which seats down -f stopped.
func Stopping(w io.Writer, seats []string) {
	if len(seats) > 0 {
		fmt.Fprintf(w, "stopped %s\n", strings.Join(seats, ", "))
	}
}

// PreserveJSON is `cotal down --preserve-state --json`.
type PreserveJSON struct {
	Space     string   `json:"space"`
	Stopped   bool     `json:"stopped"`
	PID       int      `json:"pid,omitempty"`
	Preserved []string `json:"preserved"`
	Inventory string   `json:"inventory,omitempty"`
	Ready     bool     `json:"ready"`
	Processes int      `json:"-"` // proved gone
	Broker    string   `json:"-"` // how the broker was proved unreachable
}

// Preserved says what down --preserve-state left for the next up.
func Preserved(w io.Writer, r PreserveJSON) {
	if !r.Stopped {
		fmt.Fprintf(w, "mesh %s is not running: nothing to preserve\n", r.Space)
		return
	}
	fmt.Fprintf(w, "mesh %s stopped (pid %d); %d seat(s) preserved: %s\n", r.Space, r.PID, len(r.Preserved), strings.Join(r.Preserved, ", "))
	fmt.Fprintf(w, "proved: %d seat and keeper process(es) gone; broker %s; the next `cotal up` resumes them (`cotal up --fresh` discards them)\n", r.Processes, r.Broker)
}

// Unpreservable refuses down --preserve-state while seats of supervise
// managers run.
func Unpreservable(w io.Writer, names []string) {
	fmt.Fprintf(w, "cotal: %d seat(s) run under supervise managers, which down --preserve-state cannot preserve: %s\nstop them with `cotal stop <name>` (or stop their supervise process) first; nothing was stopped\n", len(names), strings.Join(names, ", "))
}

// Discarded says what `up --fresh` discarded.
func Discarded(w io.Writer, written time.Time, names []string) {
	fmt.Fprintf(w, "discarded the preserved inventory (written %s): %d seat(s) will not be resumed: %s; their credentials are revoked as the mesh starts\n",
		written.Local().Format(time.RFC3339), len(names), strings.Join(names, ", "))
}
