package tui

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
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
	modePage         // a pager over the body: the keys, the message log, a post in full
	modeConfirm      // quitting would stop live seats: y/n
	modePicker       // choosing a persona to spawn
	modeStop         // stopping the selected seat: y/n
	modeType         // the seat line has the keys
	modeAnswer       // answering the selected seat's permission prompt: y/n
)

// panel is the region the navigation keys move in.
type panel int

const (
	panelRoster panel = iota
	panelSeats
	panelFeed
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
	line   *seatLine
	status *statusBar
	log    *messageLog
	page   *pager
	send   sender
	ctl    SeatControl
	alert  alerts
	focus  *seatFocus // shared with the collector: the seat whose screen it fetches
	ctx    context.Context

	attaching *attachRun // the attach the terminal is handed to, until it ends

	mode       mode
	panel      panel
	picked     panel // the list the selection was last made in (selection.go)
	needJump   int   // the NEEDS YOU entry the next jump starts from
	view       presence.View
	live       []string      // seats named by ConfirmQuit
	picker     personaPicker // in modePicker
	stopping   Seat          // in modeStop
	answering  Seat          // in modeAnswer
	quitting   bool
	w, h       int
	viewKnown  bool      // a batch has been seen
	downSince  time.Time // when the connection to the mesh was seen down; zero while it is up
	lastHeader int       // the header's height at the last layout
	rostered   bool      // a roster has been seen
	censused   bool      // a seat census has been seen
}

// newModel builds the model with styles and keys made once.
func newModel(cfg Config, styles Styles, s sender, al alerts) *Model {
	sh := &shared{cfg: cfg, styles: styles, keys: DefaultKeyMap(), now: time.Now()}
	log := &messageLog{}
	m := &Model{
		sh: sh, roster: newRosterView(sh), needs: newNeedsView(sh), seats: newSeatsView(sh),
		feed: newFeedView(sh), input: newInputLine(sh, log), line: newSeatLine(sh), status: newStatusBar(sh, log),
		log: log, page: newPager(sh), send: s, ctl: cfg.SeatControl, alert: al, focus: &seatFocus{},
	}
	m.needs.feed = m.feed
	m.setPanel(panelRoster)
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
		if msg.Err == nil {
			m.feed.add([]Post{m.sentPost(msg)})
		}
	case quitCheckMsg:
		if len(msg.live) == 0 {
			m.quitting = true
			return m, tea.Quit
		}
		m.live, m.mode = msg.live, modeConfirm
	case personasMsg, spawnAcceptedMsg, spawnDoneMsg, stoppedMsg, inputSentMsg, answeredMsg:
		return m, m.seatResult(msg)
	case diffMsg:
		m.showDiff(msg)
	case reviewReadyMsg, reviewEditedMsg, reviewSentMsg:
		return m, m.reviewStep(msg)
	case attachedMsg:
		m.attached(msg)
	case readRepliesMsg:
		if msg.err != nil {
			m.status.setError("reading your replies: " + msg.err.Error())
		}
	case tea.KeyMsg:
		return m, m.key(msg)
	}
	return m, nil
}

// sentPost is a send from this dashboard as the feed shows it, labelled
// as every other reader labels the operator's posts; the live copy of a
// channel post that follows has its id and is dropped.
func (m *Model) sentPost(msg sentMsg) Post {
	p := Post{ID: msg.Receipt.ID, From: m.sh.self, FromID: m.sh.selfID, Text: wire.Inert(msg.Out.Text), At: msg.At}
	switch msg.Out.Sigil {
	case '@':
		p.Kind, p.Channel, p.To = "dm", "dm", wire.CleanLabel(cmp.Or(msg.Receipt.ToName, msg.Out.To))
	case '!':
		p.Kind, p.Channel = "anycast", "@"+msg.Out.To
	default:
		p.Kind, p.Channel = "channel", msg.Out.To
	}
	return p
}

// apply folds one collector batch into the components.
func (m *Model) apply(b batchMsg) {
	// A batch built before an attach and handed over after it is older
	// than the clock the attach moved on: the clock never goes back.
	if b.Now.After(m.sh.now) {
		m.sh.now = b.Now
	}
	m.view, m.viewKnown = b.View, true
	if b.Down && m.downSince.IsZero() {
		m.downSince = b.Now
	} else if !b.Down {
		m.downSince = time.Time{}
	}
	if lines := m.headerLines(); lines != m.lastHeader {
		m.lastHeader = lines
		m.layout()
	}
	if b.SeatsChanged {
		compact := m.seats.compact()
		m.seats.setCensus(b.Census)
		m.roster.setSeats(m.seats.seats)
		if compact != m.seats.compact() {
			m.layout()
		}
		if m.panel == panelSeats && m.seats.compact() {
			m.setPanel(panelRoster)
		}
		m.relink()
		m.syncFocus()
	}
	if b.Shot != nil {
		m.seats.setShot(b.Shot)
	}
	if b.PeersChanged {
		m.roster.setPeers(b.Peers)
		m.relink()
		m.syncFocus()
		m.status.peers, m.status.online = len(b.Peers), 0
		for i := range b.Peers {
			if !b.Peers[i].Offline {
				m.status.online++
			}
		}
	}
	if b.PeersChanged || b.SeatsChanged {
		// The first roster and the first census enter nobody: they were
		// waiting before the dashboard looked.
		quiet := (b.PeersChanged && !m.rostered) || (b.SeatsChanged && !m.censused)
		m.rostered = m.rostered || b.PeersChanged
		m.censused = m.censused || b.SeatsChanged
		if entered := m.needs.rebuild(m.roster.peers, m.seats.seats, quiet); len(entered) > 0 {
			m.alertNeeds(entered)
		}
	}
	if b.Mesh != nil && !m.sh.cfg.Hosting {
		m.sh.cfg.URL, m.sh.cfg.PID = b.Mesh.URL, b.Mesh.PID
	}
	m.feed.add(b.Posts)
	if b.Unread != nil {
		m.needs.unread = *b.Unread
	}
	if b.Unread != nil || len(b.Posts) > 0 {
		if entered := m.needs.rebuild(m.roster.peers, m.seats.seats, !m.rostered || !m.censused); len(entered) > 0 {
			m.alertNeeds(entered)
		}
	}
	m.status.count(b.Now, b.Count)
	for _, err := range b.Errors {
		m.status.setError(err)
	}
}

// alertNeeds tells the person, off the screen, of agents that newly need
// them: the bell, and a desktop notification where one is set.
func (m *Model) alertNeeds(entered []laneEntry) {
	if m.sh.cfg.Bell && m.alert.bell != nil {
		m.alert.bell()
	}
	if m.sh.cfg.Notify.Via != NotifyOff && m.alert.notify != nil {
		m.alert.notify("cotal · "+m.sh.cfg.Space, notice(m.sh.now, entered))
	}
}

// key routes a key press by mode, then to the focused panel.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
		// Keys typed fast arrive as one message; each is a key of its own,
		// read in the mode the one before it left.
		cmds := make([]tea.Cmd, 0, len(msg.Runes))
		for _, r := range msg.Runes {
			cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
		}
		return tea.Batch(cmds...)
	}
	k := m.sh.keys
	if msg.String() == "ctrl+c" {
		switch m.mode {
		case modeCompose, modeType, modeFilter:
			// A prompt's Ctrl-C abandons what was typed, as a shell's does.
			if m.mode == modeFilter {
				m.clearFilter()
			}
			m.leaveMode()
			return nil
		case modeConfirm:
		default:
			m.leaveMode()
			return m.quit()
		}
	}
	switch m.mode {
	case modeCompose:
		cmd, refused := m.input.update(msg, m.send, m.feed.currentChannel())
		if refused != "" {
			m.status.setError(refused)
		}
		if !m.input.active() {
			m.mode = modeNormal
		}
		return cmd
	case modeFilter:
		typing, cmd := m.roster.updateFilter(msg)
		m.filterChanged()
		if !typing {
			m.mode = modeNormal
			m.layout()
		}
		return cmd
	case modePage:
		if !m.page.move(msg) {
			m.mode = modeNormal
		}
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
	case modePicker, modeStop, modeType, modeAnswer:
		return m.seatKey(msg)
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Help):
		m.openPage("KEYS", m.helpLines, false)
	case key.Matches(msg, k.Read):
		return m.readReplies()
	case key.Matches(msg, k.Log):
		m.log.unseen = 0
		m.openPage("MESSAGE LOG", func(w int) []string { return m.log.lines(&m.sh.styles, w) }, true)
	case key.Matches(msg, k.Compose):
		m.mode = modeCompose
		return m.input.open(m.feed.currentChannel())
	case key.Matches(msg, k.Spawn), key.Matches(msg, k.Stop), key.Matches(msg, k.Type), key.Matches(msg, k.Remove), key.Matches(msg, k.Answer):
		return m.seatKey(msg)
	case key.Matches(msg, k.Diff):
		return m.openDiff()
	case key.Matches(msg, k.Review):
		return m.openReview()
	case m.panel == panelFeed && key.Matches(msg, k.Open):
		m.openPost()
	case key.Matches(msg, k.Attach) && (msg.String() == "a" || m.panel != panelFeed):
		return m.attach()
	case key.Matches(msg, k.Filter):
		m.mode = modeFilter
		m.setPanel(panelRoster)
		cmd := m.roster.startFilter()
		m.layout()
		return cmd
	case key.Matches(msg, k.Cancel):
		m.clearFilter()
	case key.Matches(msg, k.Jump):
		m.jumpToNeed()
	case key.Matches(msg, k.Panel):
		m.cyclePanel(msg.String() == "shift+tab" || msg.String() == "left" || msg.String() == "h")
	case key.Matches(msg, k.PrevTab), key.Matches(msg, k.NextTab):
		m.feed.move(msg)
	case m.panel == panelRoster:
		if m.roster.move(msg) {
			m.linkFromRoster()
			m.syncFocus()
		}
	case m.panel == panelSeats:
		if m.seats.move(msg) {
			m.linkFromSeats()
			m.syncFocus()
		}
	default:
		m.feed.move(msg)
	}
	return nil
}

// leaveMode abandons whatever the keyboard was doing.
func (m *Model) leaveMode() {
	switch m.mode {
	case modeCompose:
		m.input.ti.Blur()
	case modeFilter:
		m.roster.filter.Blur()
		m.layout()
	case modeType:
		m.line.ti.Blur()
	}
	m.mode = modeNormal
}

// setPanel gives the navigation keys to one panel.
func (m *Model) setPanel(p panel) {
	m.panel = p
	m.roster.focused, m.seats.focused, m.feed.focused = p == panelRoster, p == panelSeats, p == panelFeed
	m.input.first = nil
	if p == panelFeed {
		m.input.first = []key.Binding{m.sh.keys.Open}
	}
	// A list entered without a cursor (the selection was not in it) gets
	// one back where it was, and the selection follows it.
	switch {
	case p == panelSeats && m.seats.none && len(m.seats.seats) > 0:
		m.seats.none = false
		m.linkFromSeats()
	case p == panelRoster && m.roster.none && len(m.roster.rows) > 0:
		m.roster.none = false
		m.linkFromRoster()
	}
	m.syncFocus()
}

// cyclePanel moves to the next (or previous) panel; the seats band is
// skipped while it has no seats.
func (m *Model) cyclePanel(back bool) {
	d := 1
	if back {
		d = 2
	}
	p := (m.panel + panel(d)) % 3
	if p == panelSeats && m.seats.compact() {
		p = (p + panel(d)) % 3
	}
	m.setPanel(p)
}

// target is the seat the seat keys act on: the selection, which the
// roster and SEATS share (selection.go): the picked peer's seat, or the
// picked seat. why says, when there is none, what to do.
func (m *Model) target() (s Seat, ok bool, why string) {
	if m.panel == panelRoster || (m.panel != panelSeats && m.picked == panelRoster) {
		if p, picked := m.roster.selected(); picked {
			if s, ok := m.roster.seatOf(p.ID); ok {
				return s, true, ""
			}
			return Seat{}, false, wire.CleanLabel(p.Name) + " is no seat of a manager here: tab to SEATS to pick one"
		}
	}
	if s, ok := m.seats.selected(); ok {
		return s, true, ""
	}
	return Seat{}, false, "no seat selected: s spawns one"
}

// syncFocus shows the target's screen, or the SEATS cursor's when there
// is no target, and tells the collector which to fetch.
func (m *Model) syncFocus() {
	s, ok, _ := m.target()
	if !ok {
		s, ok = m.seats.selected()
	}
	m.seats.show(s, ok)
	m.focus.store(s, ok)
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
	m.layout()
}

// headerLines is 1, or 2 when the view is not current or the connection
// is down.
func (m *Model) headerLines() int {
	if m.viewKnown && (m.view.State != presence.Current || !m.downSince.IsZero()) {
		return 2
	}
	return 1
}

// Layout: header; roster | NEEDS YOU; SEATS list | screen; feed; input
// line; status. The seats band shrinks to two lines while it has no seats.
func (m *Model) layout() {
	w, h := m.w, m.h
	body := h - m.headerLines() - 2
	seatsH := 2
	if !m.seats.compact() {
		seatsH = max(body*3/10, 4)
	}
	top := (body - seatsH) * 3 / 5
	feedH := body - seatsH - top
	sideW := min(max(w/3, 31), w/2)
	rw := w - sideW - 1
	m.roster.SetSize(rw, top)
	m.needs.SetSize(sideW, top)
	m.seats.SetSize(w, seatsH)
	m.feed.SetSize(w, feedH)
	m.input.SetSize(w, 1)
	m.line.SetSize(w, 1)
	m.status.SetSize(w, 1)
	m.page.SetSize(w, h-m.headerLines())
}

// openPost shows the feed's selected post in full.
func (m *Model) openPost() {
	e, ok := m.feed.selected()
	if !ok {
		m.status.setError("no post to open")
		return
	}
	post := *e
	m.openPage("POST", func(w int) []string { return m.feed.full(&post, w) }, false)
}

// openPage shows a pager over the body.
func (m *Model) openPage(title string, build func(w int) []string, end bool) {
	m.page.SetSize(m.w, m.h-m.headerLines())
	m.page.open(title, build, end)
	m.mode = modePage
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
	if m.mode == modePage {
		b.WriteString(m.page.View())
		return b.String()
	}
	sep := strings.TrimSuffix(strings.Repeat(st.Rule.Render("│")+"\n", m.roster.h), "\n")
	b.WriteString(joinColumns(m.roster.View(), sep, m.needs.View()))
	b.WriteString("\n")
	b.WriteString(m.seats.View())
	b.WriteString("\n")
	if d := m.dialog(); d != nil {
		var lines []string
		for _, l := range d {
			lines = append(lines, wrap(l, m.w, 4)...) // a question is read whole
		}
		b.WriteString(block(lines, m.w, m.feed.h))
	} else {
		b.WriteString(m.feed.View())
	}
	b.WriteString("\n")
	switch m.mode {
	case modeConfirm:
		b.WriteString(fit(st.Stalled.Render(m.quitQuestion()), m.w))
	case modeStop:
		b.WriteString(fit(st.Stalled.Render(m.stopQuestion()), m.w))
	case modeAnswer:
		b.WriteString(fit(st.Stalled.Render(m.answerQuestion()), m.w))
	case modeType:
		b.WriteString(m.line.View())
	default:
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
	if !m.downSince.IsZero() {
		follow := ""
		if c.Follow != nil {
			follow = ", following broker.json to wherever it runs next"
		}
		return line + "\n" + fit(st.Stale.Render(fmt.Sprintf(" DISCONNECTED since %s (%s): reconnecting to the mesh%s; the screen is as last seen ",
			m.downSince.Local().Format("15:04:05"), age(m.sh.now, m.downSince), follow)), m.w)
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
