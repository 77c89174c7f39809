package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/cotal-go/cotal/mesh"
)

// sender is the part of the operator's endpoint the input line uses.
type sender interface {
	Send(ctx context.Context, channel, text string, opts ...mesh.SendOption) (mesh.Receipt, error)
	DM(ctx context.Context, to, text string, opts ...mesh.SendOption) (mesh.Receipt, error)
	Ask(ctx context.Context, role, text string, opts ...mesh.SendOption) (mesh.Receipt, error)
}

// sendTimeout bounds one send from the input line.
const sendTimeout = 10 * time.Second

// outgoing is a parsed input line.
type outgoing struct {
	Sigil byte   // '#' channel, '@' peer, '!' role
	To    string // channel, peer name or role
	Text  string
}

func (o outgoing) target() string { return string(o.Sigil) + o.To }

// errNoTarget is returned for a line that names nobody to send to.
var errNoTarget = errors.New("start the line with #channel, @name or !role (or pick a channel tab first)")

// parseOutgoing reads `#chan text`, `@name text` or `!role text`; a line
// without a sigil goes to channel def when there is one.
func parseOutgoing(line, def string) (outgoing, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return outgoing{}, errors.New("nothing to send")
	}
	switch line[0] {
	case '#', '@', '!':
		to, text, _ := strings.Cut(line[1:], " ")
		text = strings.TrimSpace(text)
		if to == "" {
			return outgoing{}, fmt.Errorf("%q names nobody after %c", line, line[0])
		}
		if text == "" {
			return outgoing{}, fmt.Errorf("nothing to send to %c%s", line[0], to)
		}
		return outgoing{Sigil: line[0], To: to, Text: text}, nil
	}
	if def == "" {
		return outgoing{}, errNoTarget
	}
	return outgoing{Sigil: '#', To: def, Text: line}, nil
}

// sentMsg is the result of one send: a receipt, or why it failed.
type sentMsg struct {
	Out     outgoing
	Receipt mesh.Receipt
	Err     error
	At      time.Time
}

// sendCmd sends off the UI goroutine.
func sendCmd(s sender, o outgoing) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
		defer cancel()
		var r mesh.Receipt
		var err error
		switch o.Sigil {
		case '#':
			r, err = s.Send(ctx, o.To, o.Text)
		case '@':
			r, err = s.DM(ctx, o.To, o.Text)
		case '!':
			r, err = s.Ask(ctx, o.To, o.Text)
		}
		return sentMsg{Out: o, Receipt: r, Err: err, At: time.Now()}
	}
}

// inputLine is the line above the status bar: the compose input while
// composing, a send while it is on its way and its receipt for a few
// seconds after, otherwise the key hints.
type inputLine struct {
	sh      *shared
	ti      textinput.Model
	log     *messageLog
	result  logEntry      // the last send's outcome, shown while fresh
	sending string        // the target of the send on its way
	pending int           // sends not answered yet
	first   []key.Binding // the focused panel's own keys, hinted first
	w       int
}

func newInputLine(sh *shared, log *messageLog) *inputLine {
	ti := textinput.New()
	ti.Prompt = "send> "
	ti.Placeholder = "#channel text · @name text · !role text"
	ti.CharLimit = 4000
	return &inputLine{sh: sh, ti: ti, log: log}
}

func (in *inputLine) SetSize(w, _ int) {
	in.w = w
	in.ti.Width = max(w-len(in.ti.Prompt)-1, 1)
}

func (in *inputLine) active() bool { return in.ti.Focused() }

// open starts composing, prefilled with the channel tab's sigil.
func (in *inputLine) open(channel string) tea.Cmd {
	in.ti.SetValue("")
	if channel != "" {
		in.ti.SetValue("#" + channel + " ")
	}
	in.ti.CursorEnd()
	return in.ti.Focus()
}

// update feeds a key to the compose input. Enter parses the line and
// returns the send; esc abandons it. A line that cannot be sent stays,
// and why is returned for the status bar.
func (in *inputLine) update(msg tea.KeyMsg, s sender, def string) (tea.Cmd, string) {
	switch {
	case key.Matches(msg, in.sh.keys.Cancel):
		in.ti.Blur()
		return nil, ""
	case key.Matches(msg, in.sh.keys.Send):
		o, err := parseOutgoing(in.ti.Value(), def)
		if err != nil {
			return nil, err.Error()
		}
		if s == nil {
			return nil, "cannot send: the dashboard has no endpoint"
		}
		in.ti.Blur()
		in.pending++
		in.sending = o.target()
		return sendCmd(s, o), ""
	}
	var cmd tea.Cmd
	in.ti, cmd = in.ti.Update(msg)
	return cmd, ""
}

// sent shows a send's outcome in words for a while and logs it.
func (in *inputLine) sent(m sentMsg) {
	in.pending = max(in.pending-1, 0)
	in.result = logEntry{at: in.sh.now, text: m.Out.target() + ": " + m.Receipt.String()}
	if m.Err != nil {
		in.result = logEntry{at: in.sh.now, text: m.Out.target() + ": " + m.Err.Error(), failed: true}
	}
	in.log.add(in.result)
}

func (in *inputLine) View() string {
	st := &in.sh.styles
	switch {
	case in.active():
		return fit(in.ti.View(), in.w)
	case in.pending > 0:
		return fit(st.Receipt.Render("sending to "+in.sending+"…"), in.w)
	case in.result.fresh(in.sh.now) && in.result.failed:
		return fit(st.Error.Render("✗ "+oneLine(in.result.text)), in.w)
	case in.result.fresh(in.sh.now):
		return fit(st.Receipt.Render("→ "+oneLine(in.result.text)), in.w)
	}
	return fit(st.Dim.Render(hints(slices.Concat(in.first, in.sh.keys.ShortHelp()), in.sh.keys.Help, in.w)), in.w)
}

// hints renders bindings as "key action · key action", as many as fit in
// w cells with last (the key to all the others) always at the end.
func hints(bs []key.Binding, last key.Binding, w int) string {
	text := func(b key.Binding) string { return b.Help().Key + " " + b.Help().Desc }
	tail := text(last)
	out := ""
	for _, b := range bs {
		next := text(b)
		if out != "" {
			next = out + " · " + next
		}
		if ansi.StringWidth(next+" · "+tail) > w {
			break
		}
		out = next
	}
	if out == "" {
		return tail
	}
	return out + " · " + tail
}

func (in *inputLine) ShortHelp() []key.Binding {
	return []key.Binding{in.sh.keys.Send, in.sh.keys.Cancel}
}

func (in *inputLine) FullHelp() [][]key.Binding { return [][]key.Binding{in.ShortHelp()} }
