package pty

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
)

// renderText paints p on a fresh cols x rows emulator and returns its text
// as Screen does.
func renderText(t *testing.T, cols, rows int, p []byte) string {
	t.Helper()
	emu := vt.NewEmulator(cols, rows)
	go func() { // answers to any queries in p
		buf := make([]byte, 256)
		for {
			if _, err := emu.Read(buf); err != nil {
				return
			}
		}
	}()
	defer func() { _ = emu.InputPipe().(io.Closer).Close() }()
	if _, err := emu.Write(p); err != nil {
		t.Fatal(err)
	}
	lines := make([]string, rows)
	for y := range rows {
		var b strings.Builder
		for x := range cols {
			if c := emu.CellAt(x, y); c != nil {
				b.WriteString(c.Content)
			}
		}
		lines[y] = strings.TrimRight(b.String(), " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// seqScreen is the screen `seq 1 n` leaves on a terminal of rows rows.
func seqScreen(n, rows int) string {
	var lines []string
	for i := n - rows + 2; i <= n; i++ {
		lines = append(lines, strconv.Itoa(i))
	}
	return strings.Join(lines, "\n")
}

// Screens taken with SubscribeScreen while a flood runs and the emulator
// is behind it are each exact: painted on a fresh terminal and followed by
// their chunks, every one ends on the seat's final screen. Exactly so when
// the emulator only falls behind ("behind"); and when it skips ahead to
// the newest output ("catching up"), the screen and chunks still end where
// the seat's own screen does.
func TestSubscribeScreenExactWhileEmulatorIsBehind(t *testing.T) {
	t.Run("behind", func(t *testing.T) {
		old := catchUpLag
		catchUpLag = maxQueueLag
		t.Cleanup(func() { catchUpLag = old })
		if skipped := subscribeDuringFlood(t); skipped != 0 {
			t.Errorf("skipped %d bytes of a flood within the queue's bound", skipped)
		}
	})
	t.Run("catching up", func(t *testing.T) {
		t.Logf("skipped %d bytes", subscribeDuringFlood(t))
	})
}

// floodScript writes lines, some of them coloured and wrapping, once told
// to go.
const floodScript = `stty -echo; echo ready; read go; i=0; while [ $i -lt 40 ]; do printf '\033[1;3%dm%d\033[m ' $((i % 8)) $i; seq 1 800 | tr '\n' ' '; i=$((i+1)); done; seq 1 8000; echo flood-done`

// subscribeDuringFlood checks the screens taken during a flood and
// returns how much the emulator skipped.
func subscribeDuringFlood(t *testing.T) int64 {
	smallReads(t)
	s := startConfig(t, Config{Path: "sh", Args: []string{"-c", floodScript}, Cols: 80, Rows: 24})
	waitScreen(t, s, "ready")
	all, cancelAll := s.Subscribe()
	defer cancelAll()
	if _, err := s.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}

	type view struct {
		screen string
		chunks [][]byte
	}
	var views []*view
	var wg sync.WaitGroup
	var read int
	var behind uint64 // the most entries the emulator had still to draw at a SubscribeScreen
	for next := 4 << 10; ; {
		c, ok := <-all
		if !ok {
			break
		}
		read += len(c)
		if read < next || len(views) == 8 {
			continue
		}
		next = read + 24<<10
		s.mu.Lock()
		behind = max(behind, s.seq-s.drawn)
		s.mu.Unlock()
		scr, ch, cancel := s.SubscribeScreen()
		v := &view{screen: scr}
		views = append(views, v)
		wg.Go(func() {
			defer cancel()
			v.chunks = collect(t, ch)
		})
	}
	wg.Wait()
	waitDone(t, s, 20*time.Second)
	final := s.Screen()
	if !strings.Contains(final, "flood-done") {
		t.Fatalf("final screen:\n%s", final)
	}
	if len(views) < 3 || behind < 2 {
		t.Fatalf("%d screens taken during the flood, the emulator at most %d entries behind", len(views), behind)
	}
	t.Logf("%d screens, the emulator up to %d entries behind", len(views), behind)
	for i, v := range views {
		if got := renderText(t, 80, 24, append([]byte(v.screen), bytes.Join(v.chunks, nil)...)); got != final {
			t.Errorf("screen %d and its %d chunks end on\n%s\nthe seat's final screen is\n%s", i, len(v.chunks), got, final)
		}
	}
	return s.Skipped()
}

// A screen taken while the emulator is far behind is drawn after it skips
// to the newest output: blank where the skipped output would have left
// older content, and with its chunks it ends exactly where the seat's own
// screen does.
func TestSubscribeScreenAfterCatchUp(t *testing.T) {
	smallReads(t)
	s := startConfig(t, Config{Path: "sh", Args: []string{"-c", `stty -echo; printf '\033[10;1Hmarker'; echo ready; read go; yes "$(printf '\033[1;1H0123456789')" | head -c 170000; echo; echo flood-end; read go; printf '\033[3;1Hflood-done'`}, Cols: 80, Rows: 24})
	waitScreen(t, s, "markerready")
	all, cancelAll := s.Subscribe()
	defer cancelAll()
	s.lockEmu() // the emulator draws none of the flood until it is read
	if _, err := s.Write([]byte("\r")); err != nil {
		s.emuMu.Unlock()
		t.Fatal(err)
	}
	var seen []byte
	for !bytes.Contains(seen, []byte("flood-end")) {
		c, ok := <-all
		if !ok {
			s.emuMu.Unlock()
			t.Fatal("output ended")
		}
		seen = append(seen, c...)
	}
	s.emuMu.Unlock()
	scr, ch, cancel := s.SubscribeScreen()
	defer cancel()
	if strings.Contains(scr, "marker") {
		t.Errorf("the screen shows output from before the skip: %q", scr)
	}
	if _, err := s.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	tail := collect(t, ch)
	waitDone(t, s, 10*time.Second)
	if s.Skipped() == 0 {
		t.Error("nothing skipped")
	}
	if got, want := renderText(t, 80, 24, append([]byte(scr), bytes.Join(tail, nil)...)), s.Screen(); got != want {
		t.Errorf("the screen and its chunks end on\n%s\nthe seat's final screen is\n%s", got, want)
	}
}

// When a process exits its last output is on the screen by Done, even
// when it wrote far faster than the emulator draws: the emulator skips
// what it cannot draw in time and draws the end, the whole screen of it
// even when the very last output is a line on its own.
func TestFinalScreenAfterFlood(t *testing.T) {
	for _, tt := range []struct{ name, script, want string }{
		{"seq", "seq 1 200000", seqScreen(200000, 24)},
		{"a last line after a pause", "seq 1 200000; sleep 0.05; echo end", seqScreen(200000, 23) + "\nend"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startConfig(t, Config{Path: "sh", Args: []string{"-c", tt.script}, Cols: 80, Rows: 24})
			waitDone(t, s, 30*time.Second)
			if got := s.Screen(); got != tt.want {
				t.Fatalf("final screen\n%s\nwant\n%s", got, tt.want)
			}
			if s.Skipped() == 0 {
				t.Error("Skipped is 0 after 200000 lines written at once")
			}
			t.Logf("skipped %d bytes", s.Skipped())
		})
	}
}

// A flood far beyond the queue's bound keeps memory bounded: the queue
// never holds more than its bound, the heap does not grow with the flood,
// and the final screen is right.
func TestFloodPastBoundKeepsMemoryBounded(t *testing.T) {
	const n = 4_000_000 // about 31 MB
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse

	s := startConfig(t, Config{Path: "sh", Args: []string{"-c", "read go; seq 1 " + strconv.Itoa(n)}, Cols: 80, Rows: 24})
	if _, err := s.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	var peakHeap uint64
	var peakQueue int
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for done := false; !done; {
		select {
		case <-s.Done():
			done = true
		case <-deadline:
			t.Fatal("the flood did not finish")
		case <-tick.C:
		}
		runtime.ReadMemStats(&ms)
		peakHeap = max(peakHeap, ms.HeapInuse)
		s.mu.Lock()
		peakQueue = max(peakQueue, s.queuedBytes)
		s.mu.Unlock()
	}
	t.Logf("skipped %d bytes; queue peak %d bytes; heap in use %d MiB at start, %d MiB at peak", s.Skipped(), peakQueue, base>>20, peakHeap>>20)
	if peakQueue > maxQueueBytes {
		t.Errorf("the queue held %d bytes; its bound is %d", peakQueue, maxQueueBytes)
	}
	if grew := peakHeap - min(base, peakHeap); grew > 40<<20 {
		t.Errorf("heap in use grew by %d MiB during a 31 MB flood", grew>>20)
	}
	if s.Skipped() < 10<<20 {
		t.Errorf("skipped only %d bytes of a 31 MB flood", s.Skipped())
	}
	if got, want := s.Screen(), seqScreen(n, 24); got != want {
		t.Fatalf("final screen\n%s\nwant\n%s", got, want)
	}
}

// Modes the program set in output that was skipped still hold: the keys
// follow application cursor mode, a paste is bracketed, and the emulator
// is back on the alternate screen with the modes in its repaint.
func TestModesSetInSkippedOutputHold(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	s := startConfig(t, Config{Path: "sh", Args: []string{"-c", `stty -echo; printf '\033[?1h'; seq 1 1000000; printf '\033[?2004h\033[?1049h'; seq 1 1000000; stty raw; echo ready; exec cat > "$0"`, out}, Cols: 80, Rows: 24})
	waitDone := time.After(30 * time.Second)
	for !strings.Contains(s.Screen(), "ready") {
		s.settle()
		select {
		case <-waitDone:
			t.Fatalf("no ready on screen:\n%s", s.Screen())
		default:
		}
	}
	if s.Skipped() == 0 {
		t.Fatal("nothing was skipped")
	}
	if !s.altScreen() {
		t.Error("the emulator is not on the alternate screen")
	}
	repaint := s.ScreenANSI()
	for _, m := range []string{"\x1b[?1h", "\x1b[?2004h", "\x1b[?1049h"} {
		if !strings.Contains(repaint, m) {
			t.Errorf("ScreenANSI lacks %q", m)
		}
	}
	if _, err := s.Keys("Up", "Left"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Paste("pasted", false); err != nil {
		t.Fatal(err)
	}
	want := "\x1bOA\x1bOD\x1b[200~pasted\x1b[201~"
	waitFor(t, 5*time.Second, func() error {
		got, err := os.ReadFile(out)
		if err != nil {
			return err
		}
		if string(got) != want {
			return fmt.Errorf("program read %q; want %q", got, want)
		}
		return nil
	})
}

// A program that asks for the cursor position, in output the emulator
// skips as well as in output it draws, gets its answers.
func TestQueriesInSkippedOutputAnswered(t *testing.T) {
	s := startConfig(t, Config{Path: "bash", Args: []string{"-c", `stty -echo; seq 1 1000000; printf '\033[6n'; seq 1 1000000; read -r -s -d R x; echo got-cpr; printf '\033[c'; read -r -s -d c y; echo got-da; sleep 5`}, Cols: 80, Rows: 24})
	deadline := time.After(30 * time.Second)
	for !strings.Contains(s.Screen(), "got-da") {
		s.settle()
		select {
		case <-deadline:
			t.Fatalf("no answers (skipped %d):\n%s", s.Skipped(), s.Screen())
		case <-s.Done():
			t.Fatalf("ended without answers:\n%s", s.Screen())
		default:
		}
	}
	if s.Skipped() == 0 {
		t.Error("nothing was skipped: the first query was not in skipped output")
	}
	if !strings.Contains(s.Screen(), "got-cpr") {
		t.Errorf("no got-cpr:\n%s", s.Screen())
	}
}

// A resize reaches the emulator at its place in the output: a screen
// taken after it, while the emulator is still behind the output before
// it, has the new size, and so has the final one.
func TestResizeDrawnInOrder(t *testing.T) {
	old := catchUpLag
	catchUpLag = maxQueueLag // wait for the emulator rather than skip ahead
	t.Cleanup(func() { catchUpLag = old })
	s := startConfig(t, Config{Path: "sh", Args: []string{"-c", `stty -echo; read go; seq 1 10000; read go; stty size`}, Cols: 80, Rows: 24})
	all, cancelAll := s.Subscribe()
	defer cancelAll()
	if _, err := s.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 48000; { // all of seq's output
		c, ok := <-all
		if !ok {
			t.Fatal("output ended")
		}
		n += len(c)
	}
	if err := s.Resize(60, 20); err != nil {
		t.Fatal(err)
	}
	if c, r := s.Size(); c != 60 || r != 20 {
		t.Fatalf("Size %dx%d; want 60x20", c, r)
	}
	s.mu.Lock()
	behind := s.seq - s.drawn
	s.mu.Unlock()
	scr, ch, cancel := s.SubscribeScreen()
	defer cancel()
	t.Logf("the emulator was %d entries behind the resize", behind)
	if !strings.Contains(scr, "\x1b[20;1H") || strings.Contains(scr, "\x1b[21;1H") {
		t.Errorf("a screen taken after the resize is not 20 full rows: %q", scr)
	}
	if _, err := s.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	tail := collect(t, ch)
	waitDone(t, s, 20*time.Second)
	if got, want := renderText(t, 60, 20, append([]byte(scr), bytes.Join(tail, nil)...)), s.Screen(); got != want {
		t.Errorf("the screen and its chunks end on\n%s\nthe seat's final screen is\n%s", got, want)
	}
	if tail := s.Tail(1); len(tail) != 1 || tail[0] != "20 60" {
		t.Errorf("Tail %q; want 20 60", tail)
	}
	s.lockEmu()
	w, h := s.emu.Width(), s.emu.Height()
	s.emuMu.Unlock()
	if w != 60 || h != 20 {
		t.Errorf("emulator %dx%d; want 60x20", w, h)
	}
}

// smallReads cuts a seat's output into chunks of at most 4 KiB while the
// test runs, so a flood makes many queue entries: the catch-up and behind
// tests need several to skip or fall behind by.
func smallReads(t *testing.T) {
	old := readBufSize
	readBufSize = 4 << 10
	t.Cleanup(func() { readBufSize = old })
}
