package bench

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cotal-go/cotal/seat/sandbox"
)

// ReaderArg, as a binary's first argument, makes it the bench reader:
// the agent of the DM-to-pty paths. Every binary that links this package
// and calls sandbox.Main first (cotal does, and test binaries in their
// TestMain) plays it, so the paths run their own executable.
const ReaderArg = "__bench-reader"

func init() {
	sandbox.Handle(ReaderArg, func([]string) int {
		if err := reader(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	})
}

// StampsEnv names the file the reader appends its stamps to, so a path reads
// them without asking for the seat's screen (rendering a screen per
// message makes garbage whose collection lands in the measure).
const StampsEnv = "COTAL_BENCH_STAMPS"

// reader reads its terminal with echo off and, for each line holding a
// "mark-" token, appends "got <token> at <unix ns>" to the stamps file
// and prints it. It returns when its input ends.
func reader() error {
	stamps, err := os.OpenFile(os.Getenv(StampsEnv), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("the bench reader cannot open its stamps file: %w", err)
	}
	defer stamps.Close()
	// No echo: only the reader's own lines are drawn.
	if t, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil {
		t.Lflag &^= unix.ECHO
		_ = unix.IoctlSetTermios(0, unix.TCSETS, t)
	}
	fmt.Println("reader ready")
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if i := strings.Index(sc.Text(), "mark-"); i >= 0 {
			at := time.Now().UnixNano()
			tok, _, _ := strings.Cut(sc.Text()[i:], " ")
			line := fmt.Sprintf("got %s at %d\n", tok, at)
			fmt.Print(line)
			if _, err := stamps.WriteString(line); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// stampOf is when the reader got marker per its stamps file, 0 when not
// yet.
func stampOf(stamps, marker string) int64 {
	text, _ := os.ReadFile(stamps)
	_, rest, ok := strings.Cut(string(text), "got "+marker+" at ")
	if !ok {
		return 0
	}
	end := strings.IndexByte(rest, '\n')
	if end < 0 { // not fully written yet
		return 0
	}
	n, _ := strconv.ParseInt(rest[:end], 10, 64)
	return n
}

// waitStamp polls the stamps file for marker's stamp.
func waitStamp(stamps, marker string) (int64, error) {
	deadline := time.Now().Add(within)
	for {
		if at := stampOf(stamps, marker); at != 0 {
			return at, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the reader never stamped %s", marker)
		}
		time.Sleep(200 * time.Microsecond) // a poll interval, outside any measure
	}
}
