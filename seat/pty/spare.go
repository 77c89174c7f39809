package pty

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/x/vt"
)

// An emulator costs milliseconds of CPU to build (x/vt clears a 4 MB
// parser buffer for each), which on a small machine lands on the
// program's start: the exec and the first read wait for a core. A seat
// builds its emulator in mirror, so its first output is read without
// waiting for it; and a process that starts seats one after another
// (KeepSpare) keeps one emulator built ahead. A seat takes it, and the
// next one is built spareAfter after that seat's first output (or when
// it ends), when the start is over. A keeper, which starts one seat in
// its life, keeps none.
var spare struct {
	mu       sync.Mutex
	emu      *vt.Emulator
	building bool
	built    chan struct{} // closed when a build under way is done
}

// keepSpare is set by KeepSpare.
var keepSpare atomic.Bool

// KeepSpare makes this process keep an emulator built ahead for the
// next seat it starts, from the end of the next start on.
func KeepSpare() { keepSpare.Store(true) }

// spareAfter is how long after a seat's first output the next spare is
// built.
const spareAfter = 50 * time.Millisecond

// newEmulator is the spare, resized to cols x rows, or a new emulator
// when there is none.
func newEmulator(cols, rows int) *vt.Emulator {
	spare.mu.Lock()
	e := spare.emu
	spare.emu = nil
	spare.mu.Unlock()
	if e == nil {
		return buildEmulator(cols, rows)
	}
	if e.Width() != cols || e.Height() != rows {
		e.Resize(cols, rows)
	}
	return e
}

func buildEmulator(cols, rows int) *vt.Emulator {
	e := vt.NewEmulator(cols, rows)
	e.SetScrollbackSize(scrollback)
	return e
}

// refillSpare builds the spare in the background unless there is one or
// one is being built.
func refillSpare() {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if spare.emu != nil || spare.building {
		return
	}
	spare.building = true
	built := make(chan struct{})
	spare.built = built
	go func() {
		e := buildEmulator(DefaultCols, DefaultRows)
		spare.mu.Lock()
		spare.emu, spare.building = e, false
		spare.mu.Unlock()
		close(built)
	}()
}

// SpareReady returns once the emulator built ahead is there (building it
// now if none is), so that a measure of a seat's start leaves its build
// out of the next measure too.
func SpareReady() {
	refillSpare()
	spare.mu.Lock()
	built := spare.built
	spare.mu.Unlock()
	if built != nil {
		<-built
	}
}
