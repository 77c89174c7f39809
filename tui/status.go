package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"

	"github.com/cotal-go/cotal/mesh/render"
)

// rateWindow is how many seconds of post counts the status bar keeps.
const rateWindow = 60

// statusBar is the bottom line: space, mode, peers, the post rate with a
// sparkline, and the last error in words.
type statusBar struct {
	sh     *shared
	counts [rateWindow]int
	secs   [rateWindow]int64
	peers  int
	online int
	log    *messageLog
	msg    logEntry // the last receipt or error, shown while fresh
	w      int
}

func newStatusBar(sh *shared, log *messageLog) *statusBar { return &statusBar{sh: sh, log: log} }

func (s *statusBar) SetSize(w, _ int) { s.w = w }

// count adds n posts received at now.
func (s *statusBar) count(now time.Time, n int) {
	sec := now.Unix()
	i := int(sec % rateWindow)
	if s.secs[i] != sec {
		s.secs[i], s.counts[i] = sec, 0
	}
	s.counts[i] += n
}

// perSecond is the last n whole seconds of counts, oldest first.
func (s *statusBar) perSecond(n int) []int {
	out := make([]int, n)
	now := s.sh.now.Unix()
	for k := range n {
		sec := now - int64(n-k)
		if i := int(sec % rateWindow); s.secs[i] == sec {
			out[k] = s.counts[i]
		}
	}
	return out
}

// rate is posts per second over the last ten whole seconds.
func (s *statusBar) rate() float64 {
	total := 0
	for _, c := range s.perSecond(10) {
		total += c
	}
	return float64(total) / 10
}

var sparks = []rune("▁▂▃▄▅▆▇█")

// sparkline draws counts scaled to their maximum.
func sparkline(counts []int) string {
	peak := 0
	for _, c := range counts {
		peak = max(peak, c)
	}
	var b strings.Builder
	for _, c := range counts {
		if peak == 0 || c == 0 {
			b.WriteRune(' ')
			continue
		}
		b.WriteRune(sparks[min(c*len(sparks)/(peak+1), len(sparks)-1)])
	}
	return b.String()
}

// setError shows an error for a while and logs it.
func (s *statusBar) setError(err string) { s.show(logEntry{at: s.sh.now, text: err, failed: true}) }

// setNote shows the outcome of something the person did (a receipt) for
// a while and logs it.
func (s *statusBar) setNote(text string) { s.show(logEntry{at: s.sh.now, text: text}) }

func (s *statusBar) show(e logEntry) {
	s.msg = e
	s.log.add(e)
}

// View puts the last message right after the space, before the figures,
// so a narrow terminal cuts the figures and not the words.
func (s *statusBar) View() string {
	st := &s.sh.styles
	c := &s.sh.cfg
	sep := st.Rule.Render(" · ")
	head := st.Key.Render("● "+c.Space) + sep + "client"
	if c.Hosting {
		head = st.Key.Render("● "+c.Space) + sep + "hosting"
	}
	switch m := &s.msg; {
	case m.fresh(s.sh.now) && !m.failed:
		head += sep + st.Receipt.Render("→ "+oneLine(m.text)+" ("+age(s.sh.now, m.at)+" ago)")
	case m.fresh(s.sh.now):
		head += sep + st.Error.Render("! "+age(s.sh.now, m.at)+" ago: "+oneLine(m.text))
	case s.log.unseen > 0:
		head += sep + st.Error.Render("! "+render.Plural(s.log.unseen, "error")+" · m shows them")
	}
	var parts []string
	switch c.Mode {
	case "open":
		parts = append(parts, st.Open.Render("OPEN (no auth)"))
	case "":
	default:
		parts = append(parts, "authenticated")
	}
	if c.Sync != "" {
		parts = append(parts, "sync "+c.Sync)
	}
	parts = append(parts, fmt.Sprintf("%s, %d online", render.Plural(s.peers, "peer"), s.online), fmt.Sprintf("%.1f msg/s", s.rate()))
	line := head + sep + strings.Join(parts, sep)
	if room := s.w - lipgloss.Width(line) - 1; room >= 10 {
		line += " " + st.Working.Render(sparkline(s.perSecond(min(room, 30))))
	}
	return fit(line, s.w)
}

func (s *statusBar) ShortHelp() []key.Binding  { return nil }
func (s *statusBar) FullHelp() [][]key.Binding { return nil }
