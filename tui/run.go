package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// Run shows the dashboard until the person quits or ctx ends. It joins
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
	w, err := e.Watcher(ctx)
	if err != nil {
		return fmt.Errorf("watching the presence of space %s: %w", e.Space(), err)
	}
	out := cfg.Out
	if out == nil {
		out = os.Stdout
	}
	bell, ring := withBell(out)
	m := newModel(cfg, NewStyles(lipgloss.NewRenderer(out)), e, ring)
	m.ctx = ctx
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithAltScreen(), tea.WithOutput(bell)}
	if cfg.In != nil {
		opts = append(opts, tea.WithInput(cfg.In))
	}
	p := tea.NewProgram(m, opts...)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &collector{items: e.Next, w: w, seats: cfg.SeatSource, focus: m.focus, log: cfg.Log, tick: cfg.Tick, send: p.Send}
	go c.run(cctx, e)
	_, err = p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// withBell wraps the program's output so a bell rung from Update is
// written right after the next frame, never inside one. A terminal stays
// a terminal (bubbletea needs its Fd for the size and raw mode).
func withBell(out io.Writer) (io.Writer, func()) {
	pending := new(atomic.Bool)
	ring := func() { pending.Store(true) }
	if f, ok := out.(*os.File); ok {
		return &bellFile{File: f, pending: pending}, ring
	}
	return &bellWriter{w: out, pending: pending}, ring
}

type bellFile struct {
	*os.File
	pending *atomic.Bool
}

func (b *bellFile) Write(p []byte) (int, error) {
	n, err := b.File.Write(p)
	if err == nil && b.pending.Swap(false) {
		_, err = b.File.Write([]byte("\a"))
	}
	return n, err
}

type bellWriter struct {
	w       io.Writer
	pending *atomic.Bool
}

func (b *bellWriter) Write(p []byte) (int, error) {
	n, err := b.w.Write(p)
	if err == nil && b.pending.Swap(false) {
		_, err = b.w.Write([]byte("\a"))
	}
	return n, err
}
