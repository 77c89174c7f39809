package pty

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The screens under testdata/screens are the raw output of real programs
// (Claude Code's start and a turn, Codex's start and a turn, vim, top),
// recorded at 120x32 from a tmux pane (pipe-pane). Fed byte for byte to a
// seat and to tmux, they must draw the same screen: the seat's screen is what `cotal screen`, the
// dashboard and an attach repaint show.
func TestScreenMatchesTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("COTAL_REQUIRE_TMUX") != "" {
			t.Fatal("tmux is not installed, and COTAL_REQUIRE_TMUX asks for the tmux tests")
		}
		t.Skip("tmux is not installed: it is the reference screen")
	}
	// Draw every byte: no skipping to catch up.
	oldLag, oldCatch := maxQueueLag, catchUpLag
	maxQueueLag, catchUpLag = time.Hour, time.Hour
	t.Cleanup(func() { maxQueueLag, catchUpLag = oldLag, oldCatch })
	files, err := filepath.Glob(filepath.Join("testdata", "screens", "*.bin"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded screens (%v)", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".bin"), func(t *testing.T) {
			abs, err := filepath.Abs(f)
			if err != nil {
				t.Fatal(err)
			}
			want := tmuxScreen(t, abs)
			got := seatScreen(t, abs)
			if got != want {
				t.Errorf("the seat's screen differs from tmux's:\n%s", screenDiff(got, want))
			}
		})
	}
}

// play is a shell command writing the recording raw (no output
// processing), as the program wrote it.
func play(path string) string { return "stty -opost -echo; cat '" + path + "'" }

// seatScreen is the recording as a seat draws it.
func seatScreen(t *testing.T, path string) string {
	t.Helper()
	s := startConfig(t, Config{Path: "sh", Args: []string{"-c", play(path)}, Cols: 120, Rows: 32})
	waitDone(t, s, 10*time.Second)
	s.settle()
	if n := s.Skipped(); n != 0 {
		t.Fatalf("the emulator skipped %d bytes", n)
	}
	return normalScreen(s.Screen())
}

var tmuxSeq atomic.Int64

// tmuxScreen is the recording as tmux draws it.
func tmuxScreen(t *testing.T, path string) string {
	t.Helper()
	sock := fmt.Sprintf("cotal-fidelity-%d-%d", os.Getpid(), tmuxSeq.Add(1))
	done := "played-" + sock
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "tmux", append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", sock, "kill-server").Run() })
	script := play(path) + "; tmux -L " + sock + " wait-for -S " + done + "; exec sleep 600"
	run("new-session", "-d", "-s", "p", "-x", "120", "-y", "32", "sh", "-c", script)
	run("wait-for", done)
	return normalScreen(run("capture-pane", "-p", "-t", "p"))
}

// normalScreen trims each line's trailing blanks and the trailing empty
// lines, as Screen does.
func normalScreen(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// screenDiff names the lines that differ.
func screenDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			fmt.Fprintf(&b, "line %d:\n  seat %q\n  tmux %q\n", i+1, gl, wl)
		}
	}
	return b.String()
}
