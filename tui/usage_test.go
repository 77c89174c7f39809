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
	thrifty.Worktree = &client.WorktreeRow{Path: "/p/.cotal/worktrees/thrifty", Branch: "cotal/thrifty", Kept: "unmerged"}
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{spent, thrifty}}})
	scr := h.screen()
	if line := laneLine(scr, "spent"); !strings.HasPrefix(line, "$ spent  over budget 30s  12k of 10k tokens") {
		t.Errorf("the lane's line for a seat over budget: %q\n%s", line, scr)
	}
	if line := laneLine(scr, "thrifty"); line != "" {
		t.Errorf("a seat within budget is in the lane: %q", line)
	}
	if !strings.Contains(scr, "12k tok $0.42 over budget") || !strings.Contains(scr, "220 tok worktree kept: unmerged") {
		t.Errorf("the seats' rows do not show their tokens:\n%s", scr)
	}
}

// A harness redraws its screen while it waits on its model, so for a seat
// whose transcript is read, progress is its model's answers: working with
// fresh output but no answer for 7m is stalled; one that began working a
// minute ago after an hour idle is not; one whose transcript is not read
// still goes by its output.
func TestStalledGoesByTheModelsAnswers(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		answered, workingSince time.Duration // before t0
		usage                  bool
		want                   bool
	}{
		{"answered 7m ago, working 8m", 7 * time.Minute, 8 * time.Minute, true, true},
		{"answered an hour ago, working 1m", time.Hour, time.Minute, true, false},
		{"answered 1m ago", time.Minute, 8 * time.Minute, true, false},
		{"no transcript, fresh output", 7 * time.Minute, 8 * time.Minute, false, false},
	} {
		s := running("cc", "working", tt.workingSince)
		s.LastAnswer = t0.Add(-tt.answered)
		if tt.usage {
			s.Usage = &client.UsageRow{LastAnswerMs: s.LastAnswer.UnixMilli()}
		}
		if _, got := s.stalled(t0); got != tt.want {
			t.Errorf("%s: stalled %v, want %v", tt.name, got, tt.want)
		}
	}
	h, _ := seatHarness(t, Config{})
	h.send(tea.WindowSizeMsg{Width: 160, Height: 45})
	stuck := running("stuck", "working", 8*time.Minute)
	stuck.LastAnswer = t0.Add(-7 * time.Minute)
	stuck.Usage = &client.UsageRow{LastAnswerMs: stuck.LastAnswer.UnixMilli()}
	h.batch(0, batchMsg{SeatsChanged: true, Census: Census{Managers: 1, Seats: []Seat{stuck}}})
	if line := laneLine(h.screen(), "stuck"); !strings.Contains(line, "working 8m, no answer for 7m") {
		t.Errorf("the lane's line for a seat its model left: %q\n%s", line, h.screen())
	}
}
