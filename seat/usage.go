package seat

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/transcript"
)

// seatUsage follows a seat's harness transcript. mu serializes the reads
// (hooks of one seat may run side by side); the usage read is copied into
// the seat under its own lock.
type seatUsage struct {
	mu sync.Mutex
	r  *transcript.Reader
}

// transcriptOK reports whether path is a file the harness of format writes
// its session to, in the place it writes them, so a seat naming another
// file in its hook input does not have the manager read it: an absolute,
// clean path ending in .jsonl under projects/ of ~/.claude or $CLAUDE_CONFIG_DIR (Claude Code) or
// sessions/.../rollout-*.jsonl (Codex), its real path the same, a regular
// file of this process's user.
func transcriptOK(format, path string) bool {
	if path == "" || !filepath.IsAbs(path) || filepath.Clean(path) != path || !strings.HasSuffix(path, ".jsonl") {
		return false
	}
	switch format {
	case transcript.Claude:
		if !strings.Contains(path, "/projects/") { // under ~/.claude or $CLAUDE_CONFIG_DIR
			return false
		}
	case transcript.Codex:
		if !strings.Contains(path, "/sessions/") || !strings.HasPrefix(filepath.Base(path), "rollout-") {
			return false
		}
	default:
		return false
	}
	if real, err := filepath.EvalSymlinks(path); err != nil || real != path {
		return false
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// readTranscript brings the seat's usage up to date from the transcript its
// hook named; a new path (a new session) starts a new count.
func (h *hookCall) readTranscript(format, path string) {
	if !transcriptOK(format, path) {
		return
	}
	s := h.s
	s.mu.Lock()
	if s.usage == nil {
		s.usage = &seatUsage{}
	}
	su := s.usage
	s.mu.Unlock()
	su.mu.Lock()
	defer su.mu.Unlock()
	if su.r == nil || su.r.Path() != path {
		r, err := transcript.NewReader(format, path)
		if err != nil {
			return
		}
		su.r = r
	}
	u, err := su.r.Update()
	why := ""
	if err != nil {
		why = err.Error()
	}
	s.mu.Lock()
	s.used, s.usedErr = u, why
	s.mu.Unlock()
}

// usageRow is the seat's usage for its ps row; the caller holds s.mu.
func (s *Seat) usageRow() *client.UsageRow {
	if s.usage == nil {
		return nil
	}
	u := s.used
	r := &client.UsageRow{
		InputTokens: u.In, OutputTokens: u.Out, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite,
		ToolCalls: u.ToolCalls, Turns: u.Turns, LastAnswerMs: ms(u.Answered), Budget: s.budget, Error: s.usedErr,
	}
	if u.CostKnown {
		r.CostUSD = u.CostUSD
	}
	r.OverBudget = s.budget > 0 && u.Tokens() >= s.budget
	return r
}
