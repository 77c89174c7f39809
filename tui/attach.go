package tui

import (
	"context"
	"fmt"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/attach/tty"
)

// attachRun is an attach run full screen: bubbletea hands it the terminal
// (tea.Exec) and takes it back, the dashboard as it was, once the person
// detaches. It runs on the program's goroutine while the dashboard waits.
type attachRun struct {
	ctx  context.Context
	seat Seat
	open tty.Open
	key  byte
	in   io.Reader
	out  io.Writer

	end  tty.Ending
	err  error
	took time.Duration
}

func (a *attachRun) SetStdin(r io.Reader)  { a.in = r }
func (a *attachRun) SetStdout(w io.Writer) { a.out = w }
func (a *attachRun) SetStderr(io.Writer)   {}

// Run attaches; how it ended is kept for the message that follows, so the
// program is never told of an error (it would not repaint the same).
func (a *attachRun) Run() error {
	start := time.Now()
	defer func() { a.took = time.Since(start) }()
	a.end, a.err = tty.Run(a.ctx, tty.Options{Name: a.seat.Name, In: a.in, Out: a.out, DetachKey: a.key}, a.open)
	return nil
}

// attachedMsg says how an attach from the dashboard ended.
type attachedMsg struct {
	seat Seat
	end  tty.Ending
	err  error
	took time.Duration // how long the seat had the terminal
}

// attach hands the terminal to the selected seat until the person
// detaches.
func (m *Model) attach() tea.Cmd {
	if m.ctl == nil {
		m.status.setError(errNoControl.Error())
		return nil
	}
	s, ok, why := m.target()
	if !ok {
		m.status.setError(why)
		return nil
	}
	if !s.Running() {
		why := s.Process
		if why == "" {
			why = "it is " + s.State
		}
		m.status.setError(fmt.Sprintf("seat %s is not running (%s); there is no terminal to attach to", wire.CleanLabel(s.Name), why))
		return nil
	}
	ctx := m.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	a := &attachRun{ctx: ctx, seat: s, open: m.ctl.Sessions(s), key: m.detachKey()}
	m.attaching = a
	return tea.Exec(a, func(error) tea.Msg { return attachedMsg{seat: a.seat, end: a.end, err: a.err, took: a.took} })
}

// attached says in the status bar how the attach ended.
func (m *Model) attached(msg attachedMsg) {
	m.attaching = nil
	// The program took no batch while the seat had the terminal, so its
	// clock stood still: move it on by the attach, or the note below would
	// be as old as the attach and never shown.
	m.sh.now = m.sh.now.Add(msg.took)
	name := wire.CleanLabel(msg.seat.Name)
	switch msg.end {
	case tty.Detached:
		m.status.setNote("detached from " + name + "; it runs on")
	case tty.Exited:
		m.status.setNote(name + " exited while attached")
	case tty.Gone:
		m.status.setNote("seat " + name + " is gone")
	case tty.Cancelled:
	case tty.Failed:
		m.status.setError("attach to " + name + ": " + msg.err.Error())
	default: // only without reconnecting, which the dashboard always does
		m.status.setError("attach to " + name + " ended")
	}
}

func (m *Model) detachKey() byte {
	if k := m.sh.cfg.DetachKey; k != 0 {
		return k
	}
	return tty.DefaultDetachKey
}
