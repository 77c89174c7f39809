package pty

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestPasteSlices(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []int // slice lengths in bytes
	}{
		{"empty", "", []int{0}},
		{"short", "hello", []int{5}},
		{"exactly one slice", strings.Repeat("a", PasteSlice), []int{PasteSlice}},
		{"5000 ascii", strings.Repeat("a", 5000), []int{2048, 2048, 904}},
		// "é" is two bytes at 2047..2048: it must move whole to the second slice.
		{"rune at boundary", strings.Repeat("a", 2047) + "é" + strings.Repeat("b", 10), []int{2047, 12}},
		{"4-byte runes", strings.Repeat("😀", 1000), []int{2048, 1952}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pasteSlices(tt.text)
			var lens []int
			for _, s := range got {
				lens = append(lens, len(s))
				if len(s) > PasteSlice {
					t.Errorf("slice of %d bytes", len(s))
				}
				if !utf8.ValidString(s) {
					t.Errorf("slice splits a rune: %q...", s[max(0, len(s)-4):])
				}
			}
			if fmt.Sprint(lens) != fmt.Sprint(tt.want) {
				t.Errorf("slice lengths %v; want %v", lens, tt.want)
			}
			if strings.Join(got, "") != tt.text {
				t.Error("slices do not join back to the text")
			}
		})
	}
}

// A program that turned bracketed paste on receives the whole paste, framed
// once, then a separate Enter.
func TestPasteArrivesComplete(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	s := startSeat(t, "sh", "-c", `printf '\033[?2004h'; stty raw -echo; echo ready; exec cat > "$0"`, out)
	waitScreen(t, s, "ready")
	text := strings.Repeat("x", 2047) + "é" + strings.Repeat("y", 5000-2049)
	n, err := s.Paste(text, true)
	if err != nil {
		t.Fatalf("Paste: %v", err)
	}
	want := "\x1b[200~" + text + "\x1b[201~\r"
	if n != len(want) {
		t.Errorf("Paste accepted %d bytes; want %d", n, len(want))
	}
	waitFor(t, 5*time.Second, func() error {
		got, err := os.ReadFile(out)
		if err != nil {
			return err
		}
		if string(got) != want {
			return fmt.Errorf("file has %d bytes; want %d", len(got), len(want))
		}
		return nil
	})
}

// bash turns bracketed paste on for readline; the framed paste runs as typed.
func TestPasteIntoBash(t *testing.T) {
	s := startConfig(t, Config{Path: "bash", Args: []string{"--norc", "--noprofile", "-i"}, Env: []string{"PS1=$ ", "PATH=/usr/bin:/bin"}})
	waitFor(t, 5*time.Second, func() error {
		if !s.bracketedPaste() {
			return errors.New("bash did not turn bracketed paste on")
		}
		return nil
	})
	if _, err := s.Paste("echo bash-$((6*7))", true); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, s, "\nbash-42")
}

func TestPasteAfterExitRefused(t *testing.T) {
	s := startSeat(t, "sh", "-c", "exit 0")
	waitDone(t, s, 5*time.Second)
	if n, err := s.Paste("echo late", true); n != 0 || !errors.Is(err, ErrNotRunning) {
		t.Errorf("Paste after exit = %d, %v; want 0, ErrNotRunning", n, err)
	}
	if n, err := s.Write([]byte("x")); n != 0 || !errors.Is(err, ErrNotRunning) {
		t.Errorf("Write after exit = %d, %v; want 0, ErrNotRunning", n, err)
	}
	if err := s.Resize(80, 24); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Resize after exit = %v", err)
	}
}

// Regression: x/vt writes its answers to terminal queries into an unbuffered
// pipe, so its Write blocks forever unless something drains the pipe, and a
// TUI that asks for the cursor position at start-up hangs.
func TestQueryAnswerIsDrainedAndForwarded(t *testing.T) {
	s := startSeat(t, "bash", "-c", `printf '\033[6n\033[c'; read -r -s -d R x; read -r -s -d c y; echo got-answer; sleep 5`)
	waitScreen(t, s, "got-answer")
}

func TestQueryAnswersSwitchedOff(t *testing.T) {
	s := startSeat(t, "bash", "-c", `read -r go; printf '\033[6n'; if read -r -s -t 0.3 -d R x; then echo answered; else echo no-answer; fi; echo after; sleep 5`)
	s.SetAnswerQueries(false)
	if _, err := s.Write([]byte("go\r")); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, s, "after")
	if scr := s.Screen(); !strings.Contains(scr, "no-answer") {
		t.Fatalf("the program got an answer while answers were off:\n%s", scr)
	}
}

// Regression: output newlines arrive as "\r\n" (the pty's onlcr), and the
// emulator must place each line at column 0.
func TestOutputNewlinesAreCRLF(t *testing.T) {
	s := startSeat(t, "sh", "-c", `read x; printf 'one\ntwo\n'; sleep 5`)
	ch, cancel := s.Subscribe()
	defer cancel()
	if _, err := s.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	deadline := time.After(5 * time.Second)
	for !bytes.Contains(raw.Bytes(), []byte("two")) {
		select {
		case b := <-ch:
			raw.Write(b)
		case <-deadline:
			t.Fatalf("no output; got %q", raw.String())
		}
	}
	if !bytes.Contains(raw.Bytes(), []byte("one\r\ntwo")) {
		t.Errorf("raw output %q; want one\\r\\ntwo", raw.String())
	}
	waitFor(t, 5*time.Second, func() error {
		if got := s.Tail(2); fmt.Sprint(got) != "[one two]" {
			return fmt.Errorf("Tail(2) = %q", got)
		}
		return nil
	})
}
