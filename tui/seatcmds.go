package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// Bounds of the seat commands run as tea.Cmds.
const (
	seatCallTimeout = 10 * time.Second
	stopTimeout     = 20 * time.Second // a graceful stop waits 3 s before SIGKILL, then for offline
	awaitMargin     = 15 * time.Second // past the readiness bound, for the outcome to be written
)

// errNoControl is the answer to a seat key when nothing can act on seats.
var errNoControl = errors.New("no manager to ask: this dashboard cannot act on seats")

// The results of the seat commands, each carried back to Update.
type (
	personasMsg struct {
		names []client.PersonaChoice
		err   error
	}
	spawnAcceptedMsg struct {
		persona string
		ticket  SpawnTicket
		err     error
	}
	spawnDoneMsg struct {
		ticket  SpawnTicket
		outcome SpawnOutcome
		err     error
	}
	stoppedMsg struct {
		seat    Seat
		process string
		err     error
	}
	inputSentMsg struct {
		seat  Seat
		bytes int
		err   error
	}
	answeredMsg struct {
		seat     Seat
		decision string
		asked    string
		err      error
	}
)

func personasCmd(c SeatControl) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), seatCallTimeout)
		defer cancel()
		names, err := c.Personas(ctx)
		return personasMsg{names: names, err: err}
	}
}

func spawnCmd(c SeatControl, persona string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), seatCallTimeout)
		defer cancel()
		t, err := c.Spawn(ctx, persona)
		return spawnAcceptedMsg{persona: persona, ticket: t, err: err}
	}
}

// awaitCmd follows an accepted spawn for its readiness bound and a margin.
func awaitCmd(c SeatControl, t SpawnTicket) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), t.Deadline+awaitMargin)
		defer cancel()
		o, err := c.AwaitSpawn(ctx, t)
		return spawnDoneMsg{ticket: t, outcome: o, err: err}
	}
}

func stopCmd(c SeatControl, s Seat) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		process, err := c.Stop(ctx, s)
		return stoppedMsg{seat: s, process: process, err: err}
	}
}

func inputCmd(c SeatControl, s Seat, text string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), seatCallTimeout)
		defer cancel()
		n, err := c.Input(ctx, s, text)
		return inputSentMsg{seat: s, bytes: n, err: err}
	}
}

func answerCmd(c SeatControl, s Seat, decision string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), seatCallTimeout)
		defer cancel()
		asked, err := c.Answer(ctx, s, decision)
		return answeredMsg{seat: s, decision: decision, asked: asked, err: err}
	}
}

// spawnOutcomeText says how a spawn ended, for the status bar.
func spawnOutcomeText(m spawnDoneMsg) (string, bool) {
	name := wire.CleanLabel(m.ticket.Name)
	switch {
	case m.err != nil:
		return fmt.Sprintf("spawn of %s: no outcome (%v); see its row and screen", name, m.err), true
	case m.outcome.State == SpawnSucceeded:
		return name + " is up and on the mesh", false
	case m.outcome.State == SpawnUncertain && m.outcome.Message != "":
		return wire.CleanLabel(m.outcome.Message), true
	case m.outcome.State == SpawnUncertain:
		return name + " did not show it was up in time; it is kept running: read its screen rather than spawning again", true
	}
	msg := m.outcome.Message
	if msg == "" {
		msg = m.outcome.State
	}
	return fmt.Sprintf("spawn of %s %s: %s", name, m.outcome.State, msg), true
}

// personaPicker is the list a spawn starts from.
type personaPicker struct {
	names  []client.PersonaChoice
	cursor int
}

// move handles a navigation key.
func (p *personaPicker) move(msg tea.KeyMsg, k KeyMap) {
	switch {
	case key.Matches(msg, k.Up):
		p.cursor--
	case key.Matches(msg, k.Down):
		p.cursor++
	case key.Matches(msg, k.Top):
		p.cursor = 0
	case key.Matches(msg, k.Bottom):
		p.cursor = len(p.names) - 1
	}
	p.cursor = max(min(p.cursor, len(p.names)-1), 0)
}

// lines renders the picker for a dialog of h lines.
func (p *personaPicker) lines(st *Styles, h int) []string {
	out := []string{st.Title.Render("SPAWN A SEAT") + "  pick a persona: ↑/↓ move · enter spawns · esc cancels"}
	room := max(h-1, 1)
	if len(p.names) > room {
		room = max(room-1, 1) // a line says how many are hidden
	}
	first := max(min(p.cursor-room+1, len(p.names)-room), 0)
	first = min(first, p.cursor)
	end := min(first+room, len(p.names))
	nameW := 0
	for _, c := range p.names[first:end] {
		nameW = max(nameW, len(wire.CleanLabel(c.Name)))
	}
	for i := first; i < end; i++ {
		c := &p.names[i]
		name := wire.CleanLabel(c.Name)
		if i == p.cursor {
			name = st.Cursor.Render("› " + name)
		} else {
			name = "  " + name
		}
		out = append(out, name+strings.Repeat(" ", nameW-len(wire.CleanLabel(c.Name)))+"  "+personaAbout(*c, st))
	}
	if first > 0 || end < len(p.names) {
		out = append(out, st.Dim.Render(moreLine(first, len(p.names)-end)))
	}
	return out
}

// personaAbout is what the picker says of a persona: what runs and whether
// messages are typed in, or why it cannot be spawned.
func personaAbout(c client.PersonaChoice, st *Styles) string {
	switch {
	case c.Invalid != "":
		return st.Crashed.Render("invalid: " + oneLine(c.Invalid))
	case c.Typed:
		return st.Dim.Render(c.Harness + " · messages typed in")
	}
	return st.Dim.Render(c.Harness + " · no messages typed in (it reads cotal inbox; inject: true types them)")
}

// seatLine is the line that types into a seat: the text goes to the
// seat's terminal with Enter, through the manager's input command.
type seatLine struct {
	sh   *shared
	ti   textinput.Model
	seat Seat
	w    int
}

func newSeatLine(sh *shared) *seatLine {
	ti := textinput.New()
	ti.CharLimit = 4000
	ti.Placeholder = "a line for the seat's terminal · enter types it · esc cancels"
	return &seatLine{sh: sh, ti: ti}
}

func (l *seatLine) SetSize(w, _ int) {
	l.w = w
	l.ti.Width = max(w-len(l.ti.Prompt)-1, 1)
}

func (l *seatLine) open(s Seat) tea.Cmd {
	l.seat = s
	l.ti.Prompt = "type into " + wire.CleanLabel(s.Name) + "> "
	l.ti.Width = max(l.w-len(l.ti.Prompt)-1, 1)
	l.ti.SetValue("")
	return l.ti.Focus()
}

// update feeds a key to the line. It reports whether the line is still
// open, and the text to type when Enter was pressed.
func (l *seatLine) update(msg tea.KeyMsg) (open bool, text string, send bool, cmd tea.Cmd) {
	switch {
	case key.Matches(msg, l.sh.keys.Cancel):
		l.ti.Blur()
		return false, "", false, nil
	case key.Matches(msg, l.sh.keys.Send):
		l.ti.Blur()
		return false, l.ti.Value(), true, nil
	}
	l.ti, cmd = l.ti.Update(msg)
	return true, "", false, cmd
}

func (l *seatLine) View() string { return fit(l.ti.View(), l.w) }

// confirmLines is a yes/no dialog's text.
func confirmLines(st *Styles, title string, body ...string) []string {
	out := []string{st.Stalled.Render(title), ""}
	for _, b := range body {
		out = append(out, "  "+b)
	}
	return out
}

// seatList names seats for a question: "a, b".
func seatList(names []string) string {
	clean := make([]string, len(names))
	for i, n := range names {
		clean[i] = wire.CleanLabel(n)
	}
	return strings.Join(clean, ", ")
}
