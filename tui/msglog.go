package tui

import (
	"time"
)

// How long a receipt or an error stays on screen before it is only in the
// message log.
const (
	noteFor  = 5 * time.Second
	errorFor = 10 * time.Second
	logCap   = 200
)

// logEntry is one receipt or error the person was shown.
type logEntry struct {
	at     time.Time
	text   string
	failed bool
}

// fresh reports whether the entry is still shown at now.
func (e *logEntry) fresh(now time.Time) bool {
	if e.text == "" {
		return false
	}
	d := noteFor
	if e.failed {
		d = errorFor
	}
	return now.Sub(e.at) < d
}

// messageLog keeps what the status bar and the send line said, newest
// last, for the person to read again once it has left the screen.
type messageLog struct {
	entries []logEntry
	unseen  int // errors added since the log was last opened
}

func (l *messageLog) add(e logEntry) {
	if len(l.entries) >= logCap {
		l.entries = l.entries[1:]
	}
	l.entries = append(l.entries, e)
	if e.failed {
		l.unseen++
	}
}

// lines renders the log for a pager of width w, oldest first.
func (l *messageLog) lines(st *Styles, w int) []string {
	if len(l.entries) == 0 {
		return []string{st.Dim.Render("nothing yet: receipts and errors are kept here once they leave the screen")}
	}
	var out []string
	for _, e := range l.entries {
		mark, style := "→ ", st.Receipt
		if e.failed {
			mark, style = "! ", st.Error
		}
		for i, line := range wrap(e.text, w-11, 2) {
			if i == 0 {
				line = mark + line
			}
			stamp := "         "
			if i == 0 {
				stamp = e.at.Local().Format("15:04:05") + " "
			}
			out = append(out, st.Dim.Render(stamp)+style.Render(line))
		}
	}
	return out
}
