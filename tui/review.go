package tui

import (
	"context"
	"os/exec"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/mesh/wire"
)

// ReviewFunc prepares a review of a seat's diff: the editor to hand the
// terminal to, and finish, run once it exits with how it exited, which
// sends what the person wrote and says what it did.
type ReviewFunc func(ctx context.Context, seat string) (editor *exec.Cmd, finish func(edited error) (string, error), err error)

// The steps of a review, each carried back to Update.
type (
	reviewReadyMsg struct {
		seat   string
		editor *exec.Cmd
		finish func(error) (string, error)
		err    error
	}
	reviewEditedMsg struct {
		seat   string
		finish func(error) (string, error)
		err    error
	}
	reviewSentMsg struct {
		seat string
		said string
		err  error
	}
)

// openReview prepares the selected seat's review off the UI goroutine.
func (m *Model) openReview() tea.Cmd {
	s, ok, why := m.target()
	if !ok {
		m.status.setError(why)
		return nil
	}
	prepare := m.sh.cfg.Review
	if prepare == nil {
		m.status.setError("this dashboard cannot review diffs: run it in the project's folder")
		return nil
	}
	name := s.Name
	m.status.setNote("preparing the review of " + wire.CleanLabel(name) + "'s diff…")
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), diffTimeout)
		defer cancel()
		cmd, finish, err := prepare(ctx, name)
		return reviewReadyMsg{seat: name, editor: cmd, finish: finish, err: err}
	}
}

// reviewStep moves a review on: the editor gets the terminal, then what
// was written is sent, then the status bar says how it went.
func (m *Model) reviewStep(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case reviewReadyMsg:
		if msg.err != nil {
			m.status.setError("review of " + wire.CleanLabel(msg.seat) + ": " + oneLine(msg.err.Error()))
			return nil
		}
		return tea.ExecProcess(msg.editor, func(err error) tea.Msg {
			return reviewEditedMsg{seat: msg.seat, finish: msg.finish, err: err}
		})
	case reviewEditedMsg:
		return func() tea.Msg {
			said, err := msg.finish(msg.err)
			return reviewSentMsg{seat: msg.seat, said: said, err: err}
		}
	case reviewSentMsg:
		if msg.err != nil {
			m.status.setError("review of " + wire.CleanLabel(msg.seat) + ": " + oneLine(msg.err.Error()))
			return nil
		}
		m.status.setNote(oneLine(msg.said))
	}
	return nil
}
