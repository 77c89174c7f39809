package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
)

// rateWindow is how many seconds of post counts the status bar keeps.
const rateWindow = 60

// statusBar is the bottom line: space, mode, peers, the post rate with a
// sparkline, and the last error in words.
type statusBar struct {
	sh      *shared
	counts  [rateWindow]int
	secs    [rateWindow]int64
	peers   int
	online  int
	lastErr string
	errAt   time.Time
	w       int
}

func newStatusBar(sh *shared) *statusBar { return &statusBar{sh: sh} }

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

// setError records the last error; it stays until another replaces it.
func (s *statusBar) setError(err string, at time.Time) { s.lastErr, s.errAt = err, at }

func (s *statusBar) View() string {
	st := &s.sh.styles
	c := &s.sh.cfg
	parts := []string{st.Key.Render("● " + c.Space)}
	if c.Hosting {
		parts = append(parts, "hosting")
	} else {
		parts = append(parts, "client")
	}
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
	parts = append(parts, fmt.Sprintf("%d peers, %d online", s.peers, s.online), fmt.Sprintf("%.1f msg/s", s.rate()))
	line := strings.Join(parts, st.Rule.Render(" · "))
	if s.lastErr != "" {
		line += st.Rule.Render(" · ") + st.Error.Render("! "+age(s.sh.now, s.errAt)+" ago: "+oneLine(s.lastErr))
	}
	// The sparkline goes in only where it leaves the error whole.
	if room := s.w - lipgloss.Width(line) - 1; room >= 10 {
		spark := st.Working.Render(sparkline(s.perSecond(min(room, 30))))
		if s.lastErr == "" {
			line += " " + spark
		} else {
			i := strings.LastIndex(line, st.Rule.Render(" · "))
			line = line[:i] + " " + spark + line[i:]
		}
	}
	return fit(line, s.w)
}

func (s *statusBar) ShortHelp() []key.Binding  { return nil }
func (s *statusBar) FullHelp() [][]key.Binding { return nil }
