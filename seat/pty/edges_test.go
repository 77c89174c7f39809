package pty

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// quietSeat runs a program that prints ready and then only copies its
// input (the emulator's answers) to the file it returns, so a test can
// feed observe output of its own.
func quietSeat(t *testing.T) (*Seat, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	s := startConfig(t, Config{Path: "sh", Args: []string{"-c", `stty raw -echo; echo ready; exec cat > "$0"`, out}, Cols: 80, Rows: 24})
	waitScreen(t, s, "ready")
	s.settle()
	return s, out
}

// feedSkipping hands reads to observe while the emulator is held inside
// another entry, then, unless keep is negative, skips all but the newest
// keep bytes of them before it draws any, and waits for it to draw.
func feedSkipping(t *testing.T, s *Seat, keep int, reads ...string) {
	t.Helper()
	s.lockEmu()
	s.observe([]byte("d"), false)
	waitFor(t, 5*time.Second, func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.inflight == nil {
			return fmt.Errorf("the emulator has not taken the entry")
		}
		return nil
	})
	for _, r := range reads {
		s.observe([]byte(r), false)
	}
	if keep >= 0 {
		s.mu.Lock()
		s.skip(keep, time.Hour)
		s.mu.Unlock()
	}
	s.emuMu.Unlock()
	s.settle()
}

// waitRead waits until the program has read want.
func waitRead(t *testing.T, out, want string) []byte {
	t.Helper()
	var got []byte
	waitFor(t, 5*time.Second, func() error {
		got, _ = os.ReadFile(out)
		if !bytes.Contains(got, []byte(want)) {
			return fmt.Errorf("the program read %q; want %q in it", got, want)
		}
		return nil
	})
	return got
}

// Regression: a query split across two reads, the first skipped, was
// never answered: the restarted emulator printed its tail as text and the
// skip did not carry it over.
func TestQuerySplitAtSkipAnswered(t *testing.T) {
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprint("skip=", skip), func(t *testing.T) {
			s, out := quietSeat(t)
			keep := -1
			if skip {
				keep = len("6nbbb") + len("ccc")
			}
			feedSkipping(t, s, keep, "aaa\x1b[", "6nbbb", "ccc")
			if skip && s.Skipped() == 0 {
				t.Fatal("nothing skipped")
			}
			waitRead(t, out, "R")
			if scr := s.Screen(); strings.Contains(scr, "6n") {
				t.Errorf("the query's tail is on the screen: %q", scr)
			}
		})
	}
}

// Regression: a mode change split across two reads, the first skipped,
// was lost for the emulator (its tail printed as text) while the tracked
// state had it.
func TestModeSplitAtSkipHolds(t *testing.T) {
	s, _ := quietSeat(t)
	feedSkipping(t, s, len("49hXYZ")+len("ccc"), "aaa\x1b[?10", "49hXYZ", "ccc")
	if s.Skipped() == 0 {
		t.Fatal("nothing skipped")
	}
	s.mu.Lock()
	tracked := s.term.on(1049)
	s.mu.Unlock()
	if !tracked || !s.altScreen() {
		t.Errorf("alternate screen tracked %v, on the emulator %v; want both", tracked, s.altScreen())
	}
	if scr := s.Screen(); scr != "ccc" {
		t.Errorf("screen %q; want ccc", scr)
	}
}

// Regression: the queries carried over a skip were cut to their bound in
// the middle of one, whose rest the restarted emulator printed.
func TestGapQueriesCutToWholeQueries(t *testing.T) {
	s, _ := quietSeat(t)
	feedSkipping(t, s, len("hello"), strings.Repeat("\x1b[c", 2000), "hello")
	if scr := s.Screen(); scr != "hello" {
		t.Errorf("restarted screen %q; want hello", scr)
	}
}

// A colour query in skipped output is asked again of the restarted
// emulator, as the CSI queries are.
func TestColourQueryInSkippedOutputAnswered(t *testing.T) {
	s, out := quietSeat(t)
	feedSkipping(t, s, len("ccc"), "aaa\x1b]11;?\x07", "ccc")
	if s.Skipped() == 0 {
		t.Fatal("nothing skipped")
	}
	waitRead(t, out, "\x1b]11;rgb:")
}

// Regression: restoring in-band resize reports (mode 2048) on a restarted
// emulator made it send the program a report it had not asked for.
func TestRestartSendsNoUnaskedAnswers(t *testing.T) {
	s, out := quietSeat(t)
	s.observe([]byte("\x1b[?2048h"), false)
	s.settle()
	feedSkipping(t, s, 3, "aaa", "bbb")
	if s.Skipped() == 0 {
		t.Fatal("nothing skipped")
	}
	// Answers reach the program in order: once it has this one, it has
	// any the restart sent.
	s.observe([]byte("\x1b[6n"), false)
	got := waitRead(t, out, "R")
	if n := bytes.Count(got, []byte("\x1b[48;")); n != 1 {
		t.Errorf("the program read %d in-band resize reports in %q; it asked for one and never resized", n, got)
	}
}

// Regression: SubscribeScreen was not exact when a read ended inside an
// escape sequence or a UTF-8 character: the screen had drawn the first
// part, which its chunks could not carry on.
func TestSubscribeScreenExactAtSplitReads(t *testing.T) {
	for _, tt := range []struct{ name, script, first, last string }{
		{"sequence", `printf 'hello \033[3'; read go; printf '1mRED\033[0m world'`, "hello", "world"},
		{"rune", `printf 'h\303'; read go; printf '\251llo'`, "h", "llo"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startConfig(t, Config{Path: "sh", Args: []string{"-c", "stty -echo; " + tt.script + "; sleep 5"}, Cols: 80, Rows: 24})
			waitScreen(t, s, tt.first)
			s.settle()
			scr, ch, cancel := s.SubscribeScreen()
			if _, err := s.Write([]byte("\r")); err != nil {
				t.Fatal(err)
			}
			waitScreen(t, s, tt.last)
			cancel()
			tail := collect(t, ch)
			if got, want := renderText(t, 80, 24, append([]byte(scr), bytes.Join(tail, nil)...)), s.Screen(); got != want {
				t.Errorf("screen and chunks give %q; the seat shows %q", got, want)
			}
		})
	}
}

// What the pump keeps back of an unfinished sequence comes out when the
// output ends: no byte is lost.
func TestHeldOutputComesOutAtTheEnd(t *testing.T) {
	s := startSeat(t, "sh", "-c", `stty -echo; echo ready; read go; printf 'end\033]0;unfinished'`)
	waitScreen(t, s, "ready")
	ch, cancel := s.Subscribe()
	defer cancel()
	if _, err := s.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	if got, want := string(bytes.Join(collect(t, ch), nil)), "end\x1b]0;unfinished"; got != want {
		t.Errorf("subscriber got %q; want %q", got, want)
	}
}
