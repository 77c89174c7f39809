package tui

import (
	"context"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/mesh/wire"
)

// DiffFunc reads a seat's changes in its git worktree against its base,
// as text: a head with the file list, then the diff.
type DiffFunc func(ctx context.Context, seat string) (string, error)

// diffTimeout bounds reading a seat's diff.
const diffTimeout = 30 * time.Second

// diffMsg carries a seat's diff back to Update.
type diffMsg struct {
	seat string
	text string
	err  error
}

// openDiff reads the selected seat's diff off the UI goroutine.
func (m *Model) openDiff() tea.Cmd {
	s, ok, why := m.target()
	if !ok {
		m.status.setError(why)
		return nil
	}
	read := m.sh.cfg.Diff
	if read == nil {
		m.status.setError("this dashboard cannot read diffs: run it in the project's folder")
		return nil
	}
	m.status.setNote("reading " + wire.CleanLabel(s.Name) + "'s diff…")
	name := s.Name
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), diffTimeout)
		defer cancel()
		text, err := read(ctx, name)
		return diffMsg{seat: name, text: text, err: err}
	}
}

// showDiff opens a read diff in the pager, every line of it inert: it is
// what an agent wrote.
func (m *Model) showDiff(msg diffMsg) {
	name := wire.CleanLabel(msg.seat)
	if msg.err != nil {
		m.status.setError(name + "'s diff: " + oneLine(msg.err.Error()))
		return
	}
	m.status.setNote("")
	src := strings.Split(strings.TrimRight(msg.text, "\n"), "\n")
	for i, l := range src {
		src[i] = wire.Inert(strings.ReplaceAll(l, "\t", "    "))
	}
	st := &m.sh.styles
	m.openPage("DIFF "+name, func(w int) []string {
		var out []string
		for _, l := range src {
			for _, wl := range wrap(l, w, 0) {
				switch {
				case strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++"):
					wl = st.Idle.Render(wl)
				case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---"):
					wl = st.Error.Render(wl)
				case strings.HasPrefix(l, "@@"), strings.HasPrefix(l, "diff --git"):
					wl = st.Dim.Render(wl)
				}
				out = append(out, wl)
			}
		}
		return out
	}, false)
}
