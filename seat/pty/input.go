package pty

import (
	"fmt"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// PasteSlice is the most text, in bytes, one write of a paste carries. A
// slice never ends inside a UTF-8 sequence.
const PasteSlice = 2048

// Write writes p to the program's input as typed bytes and returns how many
// the pty accepted.
func (s *Seat) Write(p []byte) (int, error) {
	if !s.Running() {
		return 0, ErrNotRunning
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.write(p)
}

// write needs wmu.
func (s *Seat) write(p []byte) (int, error) {
	n, err := s.c.write(p)
	if err != nil {
		return n, fmt.Errorf("pty: write to process %d: %w", s.pid, err)
	}
	return n, nil
}

// Paste writes text as one paste and, when enter is set, a separate "\r"
// after it, so the program sees the text land before the Enter. The text is
// framed by ESC[200~ and ESC[201~ when the program has turned bracketed paste
// on (DEC mode 2004), exactly as a terminal would; a program that did not
// ask for it (a plain sh) would read the markers as typed keys. The text is
// written in slices of at most PasteSlice bytes, never splitting a rune. It
// returns the total bytes the pty accepted, markers included; nothing is
// written when the process has exited (ErrNotRunning).
func (s *Seat) Paste(text string, enter bool) (int, error) {
	if !s.Running() {
		return 0, ErrNotRunning
	}
	bracketed := s.bracketedPaste()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	slices := pasteSlices(text)
	parts := make([][]byte, 0, len(slices)+1)
	for i, sl := range slices {
		if bracketed && i == 0 {
			sl = ansi.BracketedPasteStart + sl
		}
		if bracketed && i == len(slices)-1 {
			sl += ansi.BracketedPasteEnd
		}
		if sl != "" {
			parts = append(parts, []byte(sl))
		}
	}
	if enter {
		parts = append(parts, []byte{'\r'})
	}
	n, err := s.c.writeParts(parts)
	if err != nil {
		return n, fmt.Errorf("pty: write to process %d: %w", s.pid, err)
	}
	return n, nil
}

// pasteSlices cuts text into pieces of at most PasteSlice bytes on rune
// boundaries; empty text is one empty piece.
func pasteSlices(text string) []string {
	if len(text) <= PasteSlice {
		return []string{text}
	}
	var out []string
	for len(text) > PasteSlice {
		cut := PasteSlice
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		if cut == 0 { // not UTF-8 at all; keep the bytes as they are
			cut = PasteSlice
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}

// writeAnswers forwards the emulator's answers to terminal queries to the
// program; it ends when drainQueries closes the queue.
func (s *Seat) writeAnswers() {
	for a := range s.answers {
		if !s.Running() {
			continue
		}
		s.wmu.Lock()
		_, _ = s.write(a)
		s.wmu.Unlock()
	}
}

// Resize sets the size of the pty (the program gets SIGWINCH) and of the
// emulator, which takes it at this point of the output. Both must be in
// 1..MaxSize.
func (s *Seat) Resize(cols, rows int) error {
	if err := checkSize(cols, rows); err != nil {
		return err
	}
	if !s.Running() {
		return ErrNotRunning
	}
	s.mu.Lock()
	if err := s.c.setSize(cols, rows); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("pty: resize to %dx%d: %w", cols, rows, err)
	}
	s.term = s.term.withSize(cols, rows)
	if !s.mirrorEnded {
		s.push(&entry{after: s.term})
		s.mu.Unlock()
		return nil
	}
	term := s.term
	s.mu.Unlock()
	// The output has ended: nothing else draws.
	s.lockEmu()
	defer s.emuMu.Unlock()
	s.emu.Resize(cols, rows)
	s.shown = term
	s.drawGen++
	return nil
}

func checkSize(cols, rows int) error {
	if cols < 1 || rows < 1 || cols > MaxSize || rows > MaxSize {
		return fmt.Errorf("pty: size %dx%d out of range 1..%d", cols, rows, MaxSize)
	}
	return nil
}
