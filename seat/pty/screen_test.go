package pty

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/charmbracelet/x/vt"
)

// SubscribeScreen's screen and its first chunk meet at the same byte, even
// in the middle of a flood: its chunks are exactly the tail of everything
// the program wrote, and its screen is the screen of everything before that
// tail. The flood wraps without newlines, so a chunk on both sides (or on
// neither) shifts every row. It comes in 100 bursts, so it is still under
// way when the test joins it: the seat reads output far faster than its
// emulator draws it.
func TestSubscribeScreenMeetsChunksExactly(t *testing.T) {
	for round := range 3 {
		s := startConfig(t, Config{Path: "sh", Args: []string{"-c", `stty -echo; echo ready; read go; i=0; while [ $i -lt 100 ]; do yes 0123456789 | tr -d '\n' | head -c 3000; i=$((i+1)); done; echo; echo flood-done`}, Cols: 40, Rows: 10})
		waitScreen(t, s, "ready")
		all, cancelAll := s.Subscribe()
		defer cancelAll()
		if _, err := s.Write([]byte("\r")); err != nil {
			t.Fatal(err)
		}
		// Join the flood once it is under way.
		var full [][]byte
		for n := 0; n < 4096; {
			c, ok := <-all
			if !ok {
				t.Fatal("output ended before the flood was under way")
			}
			full = append(full, c)
			n += len(c)
		}
		screen, ch, cancel := s.SubscribeScreen()
		tail := collect(t, ch)
		cancel()
		full = append(full, collect(t, all)...)

		if len(tail) == 0 || len(tail) > len(full) {
			t.Fatalf("round %d: %d chunks after the screen, %d in all", round, len(tail), len(full))
		}
		before := full[:len(full)-len(tail)]
		for i, c := range tail {
			if !bytes.Equal(c, full[len(before)+i]) {
				t.Fatalf("round %d: chunk %d after the screen is not the program's output at that place", round, i)
			}
		}
		// The program wrote "ready" before the test subscribed; when the
		// emulator has drawn none of the flood yet, that is the screen.
		want := render(t, append([]byte("ready\r\n"), bytes.Join(before, nil)...))
		if got := render(t, []byte(screen)); got != want {
			t.Fatalf("round %d: the screen\n%s\nis not the screen of the output before its chunks\n%s", round, got, want)
		}
	}
}

func collect(t *testing.T, ch <-chan []byte) [][]byte {
	t.Helper()
	var out [][]byte
	timeout := time.After(20 * time.Second)
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, c)
		case <-timeout:
			t.Fatal("output did not end")
		}
	}
}

// render paints p on a fresh 40x10 terminal and returns its text.
func render(t *testing.T, p []byte) string {
	t.Helper()
	emu := vt.NewEmulator(40, 10)
	if _, err := emu.Write(p); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for y := range 10 {
		var b strings.Builder
		for x := range 40 {
			if c := emu.CellAt(x, y); c != nil {
				b.WriteString(c.Content)
			}
		}
		lines = append(lines, strings.TrimRight(b.String(), " "))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// WaitScreen returns the first screen that matches, as soon as the
// emulator has drawn it; one that never matches ends with its context, and
// after the program's output ended it returns the final screen at once.
func TestWaitScreenWaitsForTheScreenNotAPoll(t *testing.T) {
	s := startConfig(t, Config{Path: "sh", Args: []string{"-c", `stty -echo; echo ready; read go; echo "said $go"; read end`}, Cols: 40, Rows: 10})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, ok := s.WaitScreen(ctx, func(t string) bool { return strings.Contains(t, "ready") }); !ok {
		t.Fatal("no ready on the screen")
	}
	done := make(chan string, 1)
	go func() {
		text, ok := s.WaitScreen(ctx, func(t string) bool { return strings.Contains(t, "said hello") })
		if !ok {
			text = "no match: " + text
		}
		done <- text
	}()
	if _, err := s.Write([]byte("hello\r")); err != nil {
		t.Fatal(err)
	}
	if text := <-done; !strings.Contains(text, "said hello") {
		t.Fatalf("WaitScreen returned %q", text)
	}

	short, stop := context.WithTimeout(ctx, 200*time.Millisecond)
	defer stop()
	if text, ok := s.WaitScreen(short, func(t string) bool { return strings.Contains(t, "never") }); ok || !strings.Contains(text, "said hello") {
		t.Fatalf("a wait for what never comes: %q, matched %v", text, ok)
	}

	if _, err := s.Write([]byte("bye\r")); err != nil {
		t.Fatal(err)
	}
	waitDone(t, s, 10*time.Second)
	if text, ok := s.WaitScreen(ctx, func(t string) bool { return strings.Contains(t, "never") }); ok || ctx.Err() != nil || !strings.Contains(text, "said hello") {
		t.Fatalf("after the end: %q, matched %v, ctx %v; want the final screen at once", text, ok, ctx.Err())
	}
}

// Screen asked again before the emulator drew anything new hands back the
// text it made (one rendering per change, however many ask), and a new
// entry drawn makes it render again.
func TestScreenRendersOncePerChange(t *testing.T) {
	s := startConfig(t, Config{Path: "sh", Args: []string{"-c", `stty -echo; echo one; read x; echo two; read y`}, Cols: 40, Rows: 10})
	waitScreen(t, s, "one")
	s.settle()
	a, b := s.Screen(), s.Screen()
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Fatal("the same screen was rendered twice")
	}
	if _, err := s.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, s, "two")
	if c := s.Screen(); !strings.Contains(c, "one") || !strings.Contains(c, "two") {
		t.Fatalf("after new output the screen is %q", c)
	}
}
