package pty

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

type ansiMode = ansi.Mode

// subscriber is one raw output fan-out. Its channel is closed when the seat's
// output ends, when it unsubscribes, or when it falls subscriberBuffer chunks
// behind (lagging): the seat never waits for a subscriber.
type subscriber struct {
	ch chan []byte
}

// pump copies the pty's output into the emulator and the subscribers until
// the stream ends: EIO once the child side of the pty is closed (Linux
// reports the end of a pty's output as EIO, not EOF), os.ErrClosed after
// Close, or the drain deadline set by reap.
func (s *Seat) pump() {
	defer close(s.pumpDone)
	buf := make([]byte, readBufSize)
	for {
		n, err := s.ptmx.Read(buf)
		if n > 0 {
			s.observe(buf[:n])
		}
		if err != nil {
			break
		}
	}
	s.mu.Lock()
	s.drained = true
	for sub := range s.subs {
		close(sub.ch)
	}
	clear(s.subs)
	s.mu.Unlock()
}

func (s *Seat) observe(p []byte) {
	s.lastOutput.Store(time.Now().UnixNano())
	s.firstOnce.Do(func() { close(s.firstOutput) })
	chunk := append([]byte(nil), p...)

	s.mu.Lock()
	defer s.mu.Unlock()
	// Write may block on the emulator's answer pipe until drainQueries reads
	// it; drainQueries never takes mu, so this cannot deadlock.
	_, _ = s.emu.Write(chunk)
	for sub := range s.subs {
		select {
		case sub.ch <- chunk:
		default:
			close(sub.ch)
			delete(s.subs, sub)
		}
	}
}

// drainQueries reads the emulator's answers to terminal queries (cursor
// position, device attributes, ...). x/vt writes them into an unbuffered
// pipe while it parses output, so without this reader the emulator, and with
// it the whole seat, would block at the first query. The answers are handed
// to writeAnswers, never written here, so a pty whose input is full cannot
// stall the output side; when the queue is full they are dropped.
//
// It reads the emulator without mu: Read touches only the pipe and the
// emulator's closed flag, which this package never sets (closeAnswerPipe
// closes the pipe's writer instead of calling Emulator.Close).
func (s *Seat) drainQueries() {
	defer close(s.answers)
	buf := make([]byte, 256)
	for {
		n, err := s.emu.Read(buf)
		if n > 0 && s.answer.Load() {
			select {
			case s.answers <- append([]byte(nil), buf[:n]...):
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// closeAnswerPipe ends drainQueries once nothing writes to the emulator.
func (s *Seat) closeAnswerPipe() {
	s.answerClosed.Do(func() {
		if c, ok := s.emu.InputPipe().(io.Closer); ok {
			_ = c.Close()
		}
	})
}

// SetAnswerQueries says whether the emulator's answers to terminal queries
// are forwarded to the program. It is on from Start; switch it off while a
// person's terminal is attached, since that terminal answers instead.
func (s *Seat) SetAnswerQueries(on bool) { s.answer.Store(on) }

func (s *Seat) trackMode(m ansi.Mode, on bool) {
	dm, ok := m.(ansi.DECMode)
	if !ok {
		return
	}
	switch dm {
	case ansi.ModeAltScreen, ansi.ModeAltScreenSaveCursor, ansi.ModeSaveCursor, ansi.ModeTextCursorEnable, 47:
		return // rendered from the emulator's own state
	}
	if on {
		s.modes[int(dm)] = true
	} else {
		delete(s.modes, int(dm))
	}
}

// bracketedPaste reports whether the program has asked for bracketed paste.
func (s *Seat) bracketedPaste() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modes[int(ansi.ModeBracketedPaste)]
}

// Screen is the emulator's current screen as plain text: one line per row,
// trailing spaces trimmed, trailing empty lines dropped.
func (s *Seat) Screen() string {
	return strings.Join(s.lines(), "\n")
}

func (s *Seat) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, h := s.emu.Width(), s.emu.Height()
	lines := make([]string, h)
	var b strings.Builder
	b.Grow(w)
	for y := range h {
		b.Reset()
		for x := range w {
			// A wide rune's trailing cells have no content.
			if c := s.emu.CellAt(x, y); c != nil {
				b.WriteString(c.Content)
			}
		}
		lines[y] = strings.TrimRight(b.String(), " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Tail is the last n non-empty lines of the current screen, oldest first.
func (s *Seat) Tail(n int) []string {
	if n <= 0 {
		return nil
	}
	var out []string
	lines := s.lines()
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			out = append(out, lines[i])
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// ScreenANSI is the bytes that repaint the current screen on a terminal of
// the same size: the alternate screen if the program is on it, the styled
// cells row by row, the DEC private modes the program set (bracketed paste,
// cursor keys, mouse reporting, ...), the cursor position and visibility.
// Scrollback is not included.
func (s *Seat) ScreenANSI() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.screenANSI()
}

// screenANSI needs mu.
func (s *Seat) screenANSI() string {
	var b strings.Builder
	if s.emu.IsAltScreen() {
		b.WriteString(ansi.SetModeAltScreenSaveCursor)
	}
	b.WriteString(ansi.ResetStyle + ansi.CursorHomePosition + ansi.EraseEntireScreen)
	for i, line := range strings.Split(s.emu.Render(), "\n") {
		if line == "" {
			continue
		}
		fmt.Fprintf(&b, "\x1b[%d;1H%s%s", i+1, line, ansi.ResetStyle)
	}
	for m := range s.modes {
		b.WriteString(ansi.SetMode(ansi.DECMode(m)))
	}
	pos := s.emu.CursorPosition()
	fmt.Fprintf(&b, "\x1b[%d;%dH", pos.Y+1, pos.X+1)
	if s.emu.CursorHidden() {
		b.WriteString(ansi.ResetModeTextCursorEnable)
	} else {
		b.WriteString(ansi.SetModeTextCursorEnable)
	}
	return b.String()
}

// Size is the terminal's current size.
func (s *Seat) Size() (cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.Width(), s.emu.Height()
}

// Subscribe returns every byte of output from now on, in order, and a
// function that ends the subscription. The chunks are shared: do not modify
// them. The seat never waits for a subscriber: one that falls more than 256
// chunks behind is dropped and its channel closed. A channel closed while
// Done is still open therefore means "lagging": resubscribe and repaint with
// ScreenANSI. After the output ends every channel is closed.
func (s *Seat) Subscribe() (<-chan []byte, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subscribe()
}

// SubscribeScreen is ScreenANSI and Subscribe taken at the same instant:
// the chunks are exactly the output after the screen, so a viewer that
// paints the screen and then the chunks misses nothing and sees nothing
// twice. The channel behaves as Subscribe's.
func (s *Seat) SubscribeScreen() (string, <-chan []byte, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	screen := s.screenANSI()
	ch, cancel := s.subscribe()
	return screen, ch, cancel
}

// subscribe needs mu.
func (s *Seat) subscribe() (<-chan []byte, func()) {
	sub := &subscriber{ch: make(chan []byte, subscriberBuffer)}
	if s.drained {
		close(sub.ch)
		return sub.ch, func() {}
	}
	s.subs[sub] = struct{}{}
	return sub.ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.subs[sub]; ok {
			delete(s.subs, sub)
			close(sub.ch)
		}
	}
}
