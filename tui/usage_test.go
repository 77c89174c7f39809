package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cotal-go/cotal/seat/client"
)

// A seat that spent its persona's budget is in NEEDS YOU, saying how much
// of what; its row shows its tokens; one within budget is not in the lane.
func TestNeedsYouListsASeatOverBudget(t *testing.T) {
	h, _ := seatHarness(t, Config{})
	h.send(tea.WindowSizeMsg{Width: 160, Height: 45})
	spent := running("spent", "idle", 0)
	spent.Usage = &client.UsageRow{InputTokens: 9000, CacheWriteTokens: 2000, OutputTokens: 1500, CostUSD: 0.42, Budget: 10000, OverBudget: true}
	spent.LastAnswer = t0.Add(-30 * time.Second)
	thrifty := running("thrifty", "idle", 0)
	thrifty.Usage = &client.UsageRow{InputTokens: 200, OutputTokens: 20, Budget: 10000}
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{spent, thrifty}}})
	scr := h.screen()
	if line := laneLine(scr, "spent"); !strings.HasPrefix(line, "$ spent  over budget 30s  12k of 10k tokens") {
		t.Errorf("the lane's line for a seat over budget: %q\n%s", line, scr)
	}
	if line := laneLine(scr, "thrifty"); line != "" {
		t.Errorf("a seat within budget is in the lane: %q", line)
	}
	if !strings.Contains(scr, "12k tok $0.42 over budget") || !strings.Contains(scr, "220 tok") {
		t.Errorf("the seats' rows do not show their tokens:\n%s", scr)
	}
}
