package tui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/mesh/wire"
)

// seatKey handles s, x, i and d, and the keys of the picker, the stop
// question and the seat line they open. Every call to a manager is
// returned as a tea.Cmd.
func (m *Model) seatKey(msg tea.KeyMsg) tea.Cmd {
	k := m.sh.keys
	switch m.mode {
	case modePicker:
		switch {
		case key.Matches(msg, k.Cancel), key.Matches(msg, k.Quit):
			m.mode = modeNormal
		case key.Matches(msg, k.Send):
			c := m.picker.names[m.picker.cursor]
			if c.Invalid != "" {
				m.status.setError("cannot spawn " + wire.CleanLabel(c.Name) + ": " + oneLine(c.Invalid))
				return nil
			}
			m.mode = modeNormal
			m.status.setNote("asking the manager to spawn " + wire.CleanLabel(c.Name) + "…")
			return spawnCmd(m.ctl, c.Name)
		default:
			m.picker.move(msg, k)
		}
		return nil
	case modeStop:
		switch {
		case key.Matches(msg, k.Yes):
			m.mode = modeNormal
			m.status.setNote("stopping " + wire.CleanLabel(m.stopping.Name) + "…")
			return stopCmd(m.ctl, m.stopping)
		case key.Matches(msg, k.No), key.Matches(msg, k.Quit):
			m.mode = modeNormal
		}
		return nil
	case modeAnswer:
		switch {
		case key.Matches(msg, k.Yes):
			m.mode = modeNormal
			m.status.setNote("approving " + wire.CleanLabel(m.answering.Name) + "'s prompt…")
			return answerCmd(m.ctl, m.answering, "allow")
		case msg.String() == "n" || msg.String() == "N":
			m.mode = modeNormal
			m.status.setNote("denying " + wire.CleanLabel(m.answering.Name) + "'s prompt…")
			return answerCmd(m.ctl, m.answering, "deny")
		case key.Matches(msg, k.Cancel), key.Matches(msg, k.Quit):
			m.mode = modeNormal
		}
		return nil
	case modeType:
		open, text, send, cmd := m.line.update(msg)
		if !open {
			m.mode = modeNormal
		}
		if send {
			return inputCmd(m.ctl, m.line.seat, text)
		}
		return cmd
	}
	if key.Matches(msg, k.Remove) {
		s, ok, why := m.target()
		if !ok {
			m.status.setError(why)
			return nil
		}
		return m.remove(s)
	}
	if m.ctl == nil {
		m.status.setError(errNoControl.Error())
		return nil
	}
	if key.Matches(msg, k.Spawn) {
		return personasCmd(m.ctl)
	}
	s, ok, why := m.target()
	if !ok {
		m.status.setError(why)
		return nil
	}
	name := wire.CleanLabel(s.Name)
	if !s.Running() {
		m.status.setError(fmt.Sprintf("seat %s is not running (%s); d removes it from the list", name, s.Process))
		return nil
	}
	if key.Matches(msg, k.Stop) {
		m.mode, m.stopping = modeStop, s
		return nil
	}
	if key.Matches(msg, k.Answer) {
		asks, waiting := s.asking()
		switch {
		case !waiting && s.Agent == "":
			m.status.setError(fmt.Sprintf("seat %s asks nothing: its harness reports nothing to cotal (a attaches to it)", name))
		case !waiting:
			m.status.setError(fmt.Sprintf("seat %s asks nothing now (it is %s)", name, wire.CleanLabel(s.Agent)))
		case !s.Answerable:
			m.status.setError(fmt.Sprintf("seat %s asks %q, which cotal cannot answer for it: a attaches to answer it", name, wire.CleanLabel(asks)))
		default:
			m.mode, m.answering = modeAnswer, s
		}
		return nil
	}
	m.mode = modeType
	return m.line.open(s)
}

// remove takes an exited seat off the list at once: there is nothing to
// lose, and nothing to ask. A running seat is never removed this way.
func (m *Model) remove(s Seat) tea.Cmd {
	name := wire.CleanLabel(s.Name)
	if !m.seats.remove(s) {
		m.status.setError("seat " + name + " is running: only a seat that has exited is removed from the list (x stops it)")
		return nil
	}
	m.roster.setSeats(m.seats.seats)
	m.needs.rebuild(m.roster.peers, m.seats.seats, false)
	m.syncFocus()
	m.status.setNote(fmt.Sprintf("removed %s (%s) from the list", name, s.Process))
	return nil
}

// seatResult folds a seat command's answer into the screen: the receipt
// or the error in the status bar.
func (m *Model) seatResult(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case personasMsg:
		switch {
		case msg.err != nil:
			m.status.setError("no personas: " + msg.err.Error())
		case len(msg.names) == 0:
			m.status.setError("no personas to spawn: add one as .cotal/agents/<name>.md in the project")
		default:
			m.picker = personaPicker{names: msg.names}
			m.mode = modePicker
		}
	case spawnAcceptedMsg:
		if msg.err != nil {
			m.status.setError("spawn " + wire.CleanLabel(msg.persona) + ": " + msg.err.Error())
			return nil
		}
		m.seats.want = msg.ticket.Name
		m.status.setNote(fmt.Sprintf("spawning %s from persona %s; waiting for it to come up…", wire.CleanLabel(msg.ticket.Name), wire.CleanLabel(msg.persona)))
		return awaitCmd(m.ctl, msg.ticket)
	case spawnDoneMsg:
		text, failed := spawnOutcomeText(msg)
		if failed {
			m.status.setError(text)
		} else {
			m.status.setNote(text)
		}
	case stoppedMsg:
		name := wire.CleanLabel(msg.seat.Name)
		if msg.err != nil {
			m.status.setError("stop " + name + ": " + msg.err.Error())
			return nil
		}
		m.status.setNote(fmt.Sprintf("stopped %s (%s); it is offline", name, msg.process))
	case answeredMsg:
		name := wire.CleanLabel(msg.seat.Name)
		if msg.err != nil {
			m.status.setError("answer " + name + ": " + msg.err.Error())
			return nil
		}
		verb := "approved"
		if msg.decision == "deny" {
			verb = "denied"
		}
		m.status.setNote(fmt.Sprintf("%s %s: %s", verb, name, wire.CleanLabel(msg.asked)))
	case inputSentMsg:
		name := wire.CleanLabel(msg.seat.Name)
		if msg.err != nil {
			m.status.setError("input to " + name + ": " + msg.err.Error())
			return nil
		}
		m.status.setNote(fmt.Sprintf("sent %d bytes to %s", msg.bytes, name))
	}
	return nil
}

// dialog is what replaces the feed while a question or the picker is
// open; nil otherwise.
func (m *Model) dialog() []string {
	st := &m.sh.styles
	switch m.mode {
	case modePicker:
		return m.picker.lines(st, m.feed.h)
	case modeStop:
		s := m.stopping
		return confirmLines(st, "STOP SEAT "+wire.CleanLabel(s.Name)+"?",
			fmt.Sprintf("%s (persona %s, pid %d, up %s) gets SIGTERM, then SIGKILL after 3 s; it goes offline.",
				wire.CleanLabel(s.Name), wire.CleanLabel(s.Persona), s.PID, age(m.sh.now, s.Started)),
			"y  stop it",
			"n  cancel: leave it running")
	case modeAnswer:
		s := m.answering
		asks, _ := s.asking()
		return confirmLines(st, wire.CleanLabel(s.Name)+" ASKS: "+wire.CleanLabel(asks),
			fmt.Sprintf("Your answer goes back through its harness's own hook (waiting %s); nothing is typed into it.", age(m.sh.now, s.AsksSince)),
			"y  approve",
			"n  deny",
			"esc  cancel: leave it asking")
	case modeConfirm:
		return confirmLines(st, "QUIT? "+m.liveSummary(),
			"This process hosts the mesh; its seats run in it and cannot outlive it.",
			"y  stop "+m.them()+" and quit (the mesh stops too)",
			"n  cancel: keep everything running")
	}
	return nil
}

// liveSummary is "2 seats still running: a, b".
func (m *Model) liveSummary() string {
	if len(m.live) == 1 {
		return "1 seat still running: " + seatList(m.live)
	}
	return fmt.Sprintf("%d seats still running: %s", len(m.live), seatList(m.live))
}

// quitQuestion is the one-line quit question.
func (m *Model) quitQuestion() string {
	return m.liveSummary() + " — stop " + m.them() + " and quit? (y) / cancel (n)"
}

func (m *Model) them() string {
	if len(m.live) == 1 {
		return "it"
	}
	return "them"
}

func (m *Model) answerQuestion() string {
	asks, _ := m.answering.asking()
	return wire.CleanLabel(m.answering.Name) + ": " + wire.CleanLabel(asks) + "? approve (y) / deny (n) / cancel (esc)"
}

func (m *Model) stopQuestion() string {
	return "stop seat " + wire.CleanLabel(m.stopping.Name) + "? (y) / cancel (n)"
}
