package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/cotal-go/cotal/mesh/presence"
)

// Minimum usable screen.
const (
	minWidth  = 60
	minHeight = 15
)

// mode is what the keyboard is talking to.
type mode int

const (
	modeNormal  mode = iota
	modeCompose      // the input line has the keys
	modeFilter       // the roster filter has the keys
	modeHelp         // the ? screen
	modeConfirm      // quitting would leave live seats: y/n
)

// quitCheckMsg carries ConfirmQuit's answer.
type quitCheckMsg struct{ live []string }

// Model is the dashboard's root: it owns the components and routes
// messages to them; the components own their state.
type Model struct {
	sh     *shared
	roster *rosterView
	needs  *needsView
	seats  *seatsView
	feed   *feedView
	input  *inputLine
	status *statusBar
	help   help.Model
	send   sender
	bell   func()

	mode      mode
	view      presence.View
	live      []string // seats named by ConfirmQuit
	quitting  bool
	w, h      int
	viewKnown bool // a batch has been seen
}

// newModel builds the model with styles and keys made once.
func newModel(cfg Config, styles Styles, s sender, bell func()) *Model {
	sh := &shared{cfg: cfg, styles: styles, keys: DefaultKeyMap(), now: time.Now()}
	m := &Model{
		sh: sh, roster: newRosterView(sh), needs: newNeedsView(sh), seats: newSeatsView(sh),
		feed: newFeedView(sh), input: newInputLine(sh), status: newStatusBar(sh),
		help: help.New(), send: s, bell: bell,
	}
	m.help.ShowAll = true
	return m
}

func (m *Model) Init() tea.Cmd { return nil }

func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case batchMsg:
		m.apply(msg)
	case sentMsg:
		m.input.sent(msg)
		if msg.Err != nil {
			m.status.setError(msg.Err.Error(), msg.At)
		} else if msg.Out.Sigil == '#' {
			m.feed.add([]Post{{ID: msg.Receipt.ID, Kind: "channel", Channel: msg.Out.To, From: "you", Text: msg.Out.Text, At: msg.At, Mine: true}})
		}
	case quitCheckMsg:
		if len(msg.live) == 0 {
			m.quitting = true
			return m, tea.Quit
		}
		m.live, m.mode = msg.live, modeConfirm
	case tea.KeyMsg:
		return m, m.key(msg)
	}
	return m, nil
}

// apply folds one collector batch into the components.
func (m *Model) apply(b batchMsg) {
	m.sh.now = b.Now
	m.view, m.viewKnown = b.View, true
	if b.SeatsChanged {
		m.seats.setSeats(b.Seats)
		m.roster.setSeats(b.Seats)
	}
	if b.PeersChanged {
		m.roster.setPeers(b.Peers)
		if m.needs.setPeers(m.roster.peers) > 0 && m.sh.cfg.Bell && m.bell != nil {
			m.bell()
		}
		m.status.peers, m.status.online = len(b.Peers), 0
		for i := range b.Peers {
			if !b.Peers[i].Offline {
				m.status.online++
			}
		}
	}
	m.feed.add(b.Posts)
	m.status.count(b.Now, b.Count)
	if n := len(b.Errors); n > 0 {
		m.status.setError(b.Errors[n-1], b.Now)
	}
}

// key routes a key press by mode, then to the focused panel.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	k := m.sh.keys
	switch m.mode {
	case modeCompose:
		cmd := m.input.update(msg, m.send, m.feed.currentChannel())
		if !m.input.active() {
			m.mode = modeNormal
		}
		return cmd
	case modeFilter:
		typing, cmd := m.roster.updateFilter(msg)
		if !typing {
			m.mode = modeNormal
			m.layout()
		}
		return cmd
	case modeHelp:
		if key.Matches(msg, k.Quit) && msg.String() == "ctrl+c" {
			return m.quit()
		}
		m.mode = modeNormal
		return nil
	case modeConfirm:
		switch {
		case key.Matches(msg, k.Yes):
			m.quitting = true
			return tea.Quit
		case key.Matches(msg, k.No), key.Matches(msg, k.Quit):
			m.mode, m.live = modeNormal, nil
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Help):
		m.mode = modeHelp
	case key.Matches(msg, k.Compose):
		m.mode = modeCompose
		return m.input.open(m.feed.currentChannel())
	case key.Matches(msg, k.Filter):
		m.mode = modeFilter
		m.roster.focused, m.feed.focused = true, false
		cmd := m.roster.startFilter()
		m.layout()
		return cmd
	case key.Matches(msg, k.Cancel):
		m.roster.clearFilter()
	case key.Matches(msg, k.Panel):
		m.roster.focused, m.feed.focused = !m.roster.focused, m.roster.focused
	case key.Matches(msg, k.PrevTab), key.Matches(msg, k.NextTab):
		m.feed.move(msg)
	case m.roster.focused:
		m.roster.move(msg)
	default:
		m.feed.move(msg)
	}
	return nil
}

// quit asks ConfirmQuit off the UI goroutine; with nothing live it quits.
func (m *Model) quit() tea.Cmd {
	check := m.sh.cfg.ConfirmQuit
	if check == nil {
		m.quitting = true
		return tea.Quit
	}
	return func() tea.Msg { return quitCheckMsg{live: check()} }
}

func (m *Model) resize(w, h int) {
	m.w, m.h = w, h
	m.help.Width = w
	m.layout()
}

// headerLines is 1, or 2 when the view is not current.
func (m *Model) headerLines() int {
	if m.viewKnown && m.view.State != presence.Current {
		return 2
	}
	return 1
}

// Layout: header; roster | NEEDS YOU over SEATS; feed; input line; status.
func (m *Model) layout() {
	w, h := m.w, m.h
	body := h - m.headerLines() - 2
	top := body * 11 / 20
	feedH := body - top
	sideW := min(max(w/3, 31), w/2)
	rw := w - sideW - 1
	needsH := top * 3 / 5
	m.roster.SetSize(rw, top)
	m.needs.SetSize(sideW, needsH)
	m.seats.SetSize(sideW, top-needsH)
	m.feed.SetSize(w, feedH)
	m.input.SetSize(w, 1)
	m.status.SetSize(w, 1)
}

func (m *Model) View() string {
	if m.quitting {
		return ""
	}
	if m.w < minWidth || m.h < minHeight {
		return cut(fmt.Sprintf("terminal too small (%dx%d), need %dx%d", m.w, m.h, minWidth, minHeight), max(m.w, 1))
	}
	st := &m.sh.styles
	var b strings.Builder
	b.WriteString(m.header())
	b.WriteString("\n")
	if m.mode == modeHelp {
		b.WriteString(m.helpView())
		return b.String()
	}
	side := lipgloss.JoinVertical(lipgloss.Left, m.needs.View(), m.seats.View())
	sep := strings.TrimSuffix(strings.Repeat(st.Rule.Render("│")+"\n", m.roster.h), "\n")
	b.WriteString(lipgloss.JoinHorizontal(lipgloss.Top, m.roster.View(), sep, side))
	b.WriteString("\n")
	b.WriteString(m.feed.View())
	b.WriteString("\n")
	if m.mode == modeConfirm {
		b.WriteString(fit(st.Stalled.Render(fmt.Sprintf("live seats: %s. Quit anyway? y/n", strings.Join(m.live, ", "))), m.w))
	} else {
		b.WriteString(m.input.View())
	}
	b.WriteString("\n")
	b.WriteString(m.status.View())
	return b.String()
}

// header says which space, whether this process hosts the mesh or is a
// client of it, and whether the roster can be trusted.
func (m *Model) header() string {
	st := &m.sh.styles
	c := &m.sh.cfg
	var badge, what string
	if c.Hosting {
		badge = st.Hosting.Render(" HOSTING ")
		what = fmt.Sprintf(" mesh %s runs in this process (pid %d) · q stops it", c.Space, c.PID)
	} else {
		badge = st.Client.Render(" CLIENT ")
		what = fmt.Sprintf(" of mesh %s (pid %d) · q leaves it running", c.Space, c.PID)
	}
	line := fit(st.Header.Render("cotal ")+badge+what+st.Dim.Render("  "+c.URL), m.w)
	if !m.viewKnown {
		return line
	}
	switch m.view.State {
	case presence.Stale:
		since := m.view.StaleSince
		line += "\n" + fit(st.Stale.Render(fmt.Sprintf(" VIEW STALE since %s (%s): presence watch silent; last-known statuses, nobody marked offline ",
			since.Local().Format("15:04:05"), age(m.sh.now, since))), m.w)
	case presence.Unpopulated:
		line += "\n" + fit(st.Stale.Render(" VIEW LOADING: the presence snapshot has not arrived; the roster may be incomplete "), m.w)
	}
	return line
}

func (m *Model) helpView() string {
	k := m.sh.keys
	lines := []string{
		m.sh.styles.Title.Render("KEYS") + "  (any key closes this)",
		"",
		m.help.FullHelpView(k.FullHelp()),
		"",
		"send line:  #channel text   post to a channel",
		"            @name text      direct message to a peer",
		"            !role text      task for one holder of a role",
		"            text            post to the selected channel tab",
		"",
		"roster:  ● working  ◐ waiting  ○ idle  ⨯ offline  ⚙ endpoint;  FOR = status age, HEARD = last heartbeat",
		"         'working · progress unknown': no seat output observed;  'stalled Nm': no output for over 5m",
	}
	body := strings.Split(strings.Join(lines, "\n"), "\n")
	return block(body, m.w, m.h-m.headerLines())
}
