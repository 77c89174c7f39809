package tui

import (
	"context"
	"errors"
	"fmt"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/term"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Run shows the dashboard until the person quits or ctx ends (it handles
// no signal itself: the caller ends ctx on the quit signals). It joins
// every channel (">", live) on the operator's endpoint so the feed sees
// every post, and it never closes the endpoint: the caller does.
func Run(ctx context.Context, cfg Config) error {
	e := cfg.Endpoint
	if e == nil {
		return errors.New("tui: no endpoint to show")
	}
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick
	}
	if cfg.Space == "" {
		cfg.Space = e.Space()
	}
	if _, err := e.Join(ctx, ">"); err != nil {
		return fmt.Errorf("reading every channel of space %s: %w", e.Space(), err)
	}
	if err := e.EchoDirect(ctx); err != nil && !errors.Is(err, mesh.ErrEchoesOff) && cfg.Log != nil {
		cfg.Log.Logf("DMs and asks sent as %s from other terminals will not show in the feed: %v", e.Me().ID(), err)
	}
	w, err := e.Watcher(ctx)
	if err != nil {
		return fmt.Errorf("watching the presence of space %s: %w", e.Space(), err)
	}
	out := cfg.Out
	if out == nil {
		out = os.Stdout
	}
	var logf func(string)
	if cfg.Log != nil {
		logf = func(s string) { cfg.Log.Logf("%s", s) }
	}
	screen, al := terminalAlerts(ctx, out, cfg.Notify, logf)
	m := newModel(cfg, NewStyles(lipgloss.NewRenderer(out)), e, al)
	m.ctx = ctx
	m.sh.self, m.sh.selfID = selfLabel(e), e.Me().ID()
	if f, ok := out.(*os.File); !ok || !term.IsTerminal(f.Fd()) {
		m.resize(80, 24) // no terminal tells its size: draw a common one
	}
	// The caller's ctx carries the quit signals (it ends on SIGTERM); the
	// program's own handler would race it for the same signal and, losing,
	// block forever sending its quit to a loop that has ended, so the
	// program never returned and `cotal down` waited out its timeout.
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithAltScreen(), tea.WithOutput(screen), tea.WithoutSignalHandler()}
	if cfg.In != nil {
		opts = append(opts, tea.WithInput(cfg.In))
	}
	p := tea.NewProgram(m, opts...)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &collector{items: e.Next, w: w, seats: cfg.SeatSource, focus: m.focus, log: cfg.Log, tick: cfg.Tick, send: p.Send, follow: cfg.Follow, up: e.Connected}
	go c.run(cctx, e)
	_, err = p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// selfLabel is how the endpoint's posts are labelled wherever they are
// read, so the dashboard names its own posts the same way.
func selfLabel(e *mesh.Endpoint) string {
	return wire.SenderLabel(e.Me(), wire.Sender{Name: e.Card().Name, Role: e.Role()})
}
