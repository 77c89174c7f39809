package seat

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/seat/client"
	"github.com/cotal-go/cotal/seat/pty"
)

// Readiness of a harness that reports itself (harness.go): its MCP client
// connected, its own start was reported (a session began; for a harness
// whose session begins with its first turn, its MCP client is its start),
// and its screen
// shows it at its prompt with nothing over it (or its hooks report its
// first turn, begun by a prompt given at spawn). A dialog on its screen
// instead (a first run, a trust or update question) is waiting, not
// ready: the seat reads waiting with the dialog's question, and once that
// has held for dialogSettle the spawn ends uncertain, saying so.
const (
	readyPoll    = 100 * time.Millisecond
	dialogSettle = time.Second
)

func (m *Manager) awaitReported(ctx context.Context, s *Seat, proc *pty.Seat, g *ep.Goal) bool {
	t := time.NewTicker(readyPoll)
	defer t.Stop()
	var dialog string
	var dialogSince time.Time
	told := false
	for {
		select {
		case <-proc.Done():
			return false
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		hello := false
		select {
		case <-s.hello:
			hello = true
		default:
		}
		scr := s.h.screen(strings.Split(proc.Screen(), "\n"))
		s.mu.Lock()
		// A harness whose session begins with its first turn is started
		// once its MCP client connected.
		started := s.agent.session != "" || !s.h.sessionAtStart()
		fresh := !s.agent.reported
		shown := s.agent.state == client.AgentWaiting && s.agent.asks == scr.dialog
		// A turn its hooks report (a prompt given at spawn) shows it up
		// and past its start, whatever its screen holds.
		turn := s.agent.state == client.AgentWorking || s.agent.ask != nil
		s.mu.Unlock()
		switch {
		case turn:
		case scr.dialog != "":
			if scr.dialog != dialog {
				dialog, dialogSince, told = scr.dialog, time.Now(), false
			}
			if !shown {
				s.report(m, agentReport{state: client.AgentWaiting, kind: client.AskDialog, asks: scr.dialog, source: "screen at start"})
			}
			if !told && time.Since(dialogSince) >= dialogSettle {
				told = true
				m.uncertainGoal(g, fmt.Sprintf("%s is waiting on a dialog at its start: %q; answer it by attaching (cotal attach %s)", s.name, scr.dialog, s.name))
			}
		case dialog != "":
			dialog = ""
			s.report(m, agentReport{state: client.AgentIdle, source: "screen at start: its dialog closed", screenIdle: true})
		}
		if hello && started && (scr.atPrompt || turn) {
			if fresh && scr.atPrompt {
				// Nothing reported yet: its screen shows it at its prompt.
				s.report(m, agentReport{state: client.AgentIdle, source: "screen at start: at its prompt", screenIdle: true})
			}
			return true
		}
	}
}
