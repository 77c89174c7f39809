package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/cotal-go/cotal/seat/attach/tty"
)

// helpLines is the ? screen for width w: every key first, in as many
// columns as fit, then what the send line takes and what the shapes mean.
func (m *Model) helpLines(w int) []string {
	st := &m.sh.styles
	var bs []key.Binding
	for _, col := range m.sh.keys.FullHelp() {
		bs = append(bs, col...)
	}
	keyW, descW := 0, 0
	for _, b := range bs {
		keyW = max(keyW, ansi.StringWidth(b.Help().Key))
		descW = max(descW, ansi.StringWidth(b.Help().Desc))
	}
	colW := min(keyW+2+descW, w)
	cols := max((w+3)/(colW+3), 1)
	rows := (len(bs) + cols - 1) / cols
	out := make([]string, 0, rows+24)
	for r := range rows {
		var line strings.Builder
		for c := range cols {
			i := c*rows + r
			if i >= len(bs) {
				break
			}
			if c > 0 {
				line.WriteString("   ")
			}
			h := bs[i].Help()
			line.WriteString(st.Key.Render(pad(h.Key, keyW)) + "  " + pad(h.Desc, colW-keyW-2))
		}
		out = append(out, line.String())
	}
	text := []string{
		"",
		"SEND LINE",
		"  #channel text   post to a channel",
		"  @name text      direct message to a peer",
		"  !role text      task for one holder of a role",
		"  text            post to the selected channel tab",
		"",
		"ROSTER  ● working  ◐ waiting  ○ idle  ⨯ offline  ⚙ endpoint; FOR is the status's age, HEARD the last heartbeat's; 'working · progress unknown': no seat output observed.",
		"NEEDS YOU  every agent that needs you, oldest first: ◐ waiting; " + glyphStalled + " stalled, no output (no model answer, where its transcript is read) for over 5m while working or with messages waiting to be typed in; " +
			glyphCrashed + " crashed, its process ended on its own with a failure; " + glyphHeld + " held, messages wait while its person types; " +
			glyphUnread + " unread, replies to you (DMs) wait: r reads them and acks them for every dashboard; " +
			glyphSuspended + " stopped, its process is stopped by a signal and runs nothing until continued; " +
			"? uncertain, its spawn never showed it was up (it is kept running: look at its screen).",
		"SEATS  PROCESS and MESH side by side; ≠ marks a row where they disagree; ⨯ a seat that exited or was stopped. The roster and SEATS share one pick (the cursor of both; a list without it shows none); the keys act on that seat, and its screen is on the right. n jumps to the next that needs you; / filters the roster, SEATS and the feed by name, status or text.",
		"ATTACH  a or enter attaches full screen: every key goes to the seat; " + tty.KeyName(m.detachKey()) + " comes back here; ⧉ names who is attached.",
		"MESSAGES  receipts and errors show for a few seconds, then stay in the message log (m).",
		"ALERTS  " + m.alertsText(),
	}
	for _, t := range text {
		out = append(out, wrap(t, w, 2)...)
	}
	return out
}

// alertsText says how the dashboard reaches a person away from it, and
// how to change that.
func (m *Model) alertsText() string {
	bell := "no bell (--no-bell)"
	if m.sh.cfg.Bell {
		bell = "the bell rings"
	}
	how := "no desktop notification (turned off, or no way to raise one was found; " + NotifyEnv + "=osc9, osc777 or notify-send names one)"
	if v := m.sh.cfg.Notify.Via; v != NotifyOff {
		how = "a desktop notification by " + v.String() + " (--no-notify or " + NotifyEnv + "=off turns it off)"
	}
	return "when an agent newly needs you " + bell + ", and " + how + "."
}
