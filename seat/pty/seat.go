package pty

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/charmbracelet/x/vt"
	cpty "github.com/creack/pty"
)

// Defaults and bounds of a seat's terminal.
const (
	DefaultCols = 120
	DefaultRows = 32
	// MaxSize bounds cols and rows: the emulator allocates cols x rows cells,
	// and the size can come from a remote attach client.
	MaxSize = 2000

	term        = "xterm-256color"
	scrollback  = 1000
	killAfter   = 3 * time.Second
	drainGrace  = 2 * time.Second
	answerQueue = 64
)

// readBufSize bounds one chunk of output: the pump takes what the pty
// already holds up to it. 64 KiB, four times what the line discipline hands
// over at once, lets a flood travel to an attach client in frames large
// enough that its credit window rarely runs dry. A variable so a test can
// cut the output finer.
var readBufSize = 64 << 10

// subscriberBuffer is how many chunks a subscriber may fall behind before it
// is dropped; a variable so a test can make a subscriber lag quickly.
var subscriberBuffer = 256

// ErrNotRunning is returned by Write, Paste, Signal and Resize when the
// seat's process has exited; nothing was written or sent.
var ErrNotRunning = errors.New("pty: process is not running")

// Config says what to run and how big its terminal starts.
type Config struct {
	Path string   // the program; looked up with exec.LookPath
	Args []string // arguments after the program name
	Dir  string   // working directory; empty means the caller's
	// Env is the full environment (the caller adds COTAL_*); nil means the
	// caller's environment. TERM is always replaced by xterm-256color.
	Env  []string
	Cols int // default 120
	Rows int // default 32
	// SysProcAttr adds process attributes (namespaces, id mappings,
	// ambient capabilities); Setsid and Setctty are always set, on a copy.
	SysProcAttr *syscall.SysProcAttr
	// ExtraFiles are handed to the process as fds 3, 4, ...
	ExtraFiles []*os.File
}

// Seat is one process running in its own pty, session and process group.
//
// Goroutines, each ending on its own once the process has exited and its
// output is drained (Done), so none outlives the seat:
//   - pump: reads the pty master, hands each chunk to the subscribers and
//     queues it for the emulator (owns reads and scan).
//   - mirror: takes an emulator (see spare), then feeds the queue to it
//     (the only writer of emu). emu is set once, before emuReady closes,
//     and read only after it (lockEmu), so the pump reads the program's
//     first output without waiting for an emulator.
//   - reap: waits for the process, then finishes the seat (closes the master,
//     the emulator's answer pipe, and done).
//   - drainQueries: reads the emulator's answers to terminal queries.
//   - writeAnswers: forwards those answers to the pty.
//
// Locks: mu guards the subscribers, the queue and the terminal state as
// read (term); emuMu guards the emulator and the state as drawn (shown),
// since x/vt is not safe for concurrent use; wmu serializes writes to the
// pty so a paste is never interleaved. Lock order: emuMu before mu (only
// SubscribeScreen holds both); wmu is never held with either. Nothing
// writes to the emulator under mu: its Write may block on the answer pipe.
type Seat struct {
	c       conduit
	pid     int
	started time.Time

	mu          sync.Mutex
	subs        map[*subscriber]struct{}
	drained     bool       // the pump has ended; no more output
	term        *termState // size and modes as of the output read so far
	queue       []*entry   // what the emulator has still to draw, oldest first
	queuedBytes int
	queuedCost  time.Duration
	seq         uint64 // entries queued so far
	drawn       uint64 // the last entry the emulator has drawn
	inflight    *entry // taken from the queue, being drawn
	waiters     []*screenWaiter
	redrawn     chan struct{} // closed at the next entry drawn, or the end; nil until WaitScreen asks
	mirrorEnded bool
	discard     bool          // Close: stop drawing
	wake        *sync.Cond    // on mu: the queue, waiters or the end changed
	poke        chan struct{} // ends the emulator's rest: someone waits for it

	emuMu    sync.Mutex
	emuReady chan struct{} // closed once emu is built
	spared   chan struct{} // closed once the next spare is asked for (or none will be)
	emu      *vt.Emulator
	shown    *termState  // size and modes as drawn, for ScreenANSI
	shownSeq uint64      // the last entry drawn
	drawGen  uint64      // counts changes to the emulator: what text is of
	text     string      // the screen as text at textGen, for Screen
	textGen  uint64      // 0: none yet
	guard    stringGuard // what the emulator is fed goes through it

	wmu sync.Mutex

	scan    modeScanner // the pump's: what it keeps back of the output
	events  []modeEvent // the pump's scratch
	queries []byte      // the pump's scratch

	skipped      atomic.Int64
	lastOutput   atomic.Int64 // unix nanos; 0 until the first output
	answer       atomic.Bool  // forward the emulator's query answers to the pty
	restoring    atomic.Bool  // the emulator is being restarted: drop its answers
	firstOutput  chan struct{}
	firstOnce    sync.Once
	answers      chan []byte
	pumpDone     chan struct{}
	mirrorDone   chan struct{}
	exited       chan struct{} // closed after exitCode/exitSignal are set
	exitedFlag   atomic.Bool
	exitCode     int
	exitSignal   string
	lost         error // the end was not seen (see Exit.Lost)
	done         chan struct{}
	closeOnce    sync.Once
	answerClosed sync.Once
}

// Start runs cfg.Path in a new pty with TERM=xterm-256color, in its own
// session and process group (the pty is its controlling terminal), sized
// cols x rows. ctx bounds the start only: the seat outlives it.
func Start(ctx context.Context, cfg Config) (*Seat, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := exec.LookPath(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("pty: start %q: %w", cfg.Path, err)
	}
	cols, rows := cfg.Cols, cfg.Rows
	if cols <= 0 {
		cols = DefaultCols
	}
	if rows <= 0 {
		rows = DefaultRows
	}
	if err := checkSize(cols, rows); err != nil {
		return nil, err
	}

	cmd := exec.Command(path, cfg.Args...)
	cmd.Args[0] = cfg.Path
	cmd.Dir = cfg.Dir
	cmd.Env = withTerm(cfg.Env)
	cmd.ExtraFiles = cfg.ExtraFiles
	if cfg.SysProcAttr != nil {
		attr := *cfg.SysProcAttr
		cmd.SysProcAttr = &attr
	}
	// StartWithSize sets Setsid and Setctty.
	ptmx, err := cpty.StartWithSize(cmd, &cpty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		return nil, fmt.Errorf("pty: start %s: %w", path, err)
	}
	// creack/pty leaves the master in blocking mode (its ioctls call Fd), so a
	// pending Read would pin a thread and ignore Close and deadlines. Switch it
	// back through the runtime poller, and never call ptmx.Fd again.
	if err := setNonblock(ptmx); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = ptmx.Close()
		return nil, fmt.Errorf("pty: start %s: nonblocking master: %w", path, err)
	}

	s := newSeat(&ptyConduit{cmd: cmd, ptmx: ptmx, pid: cmd.Process.Pid}, cmd.Process.Pid, time.Now(), cols, rows)
	s.start()
	return s, nil
}

// Remote makes a Seat of a process held elsewhere: its output feeds this
// Seat's emulator as a child's would, and its input, size and signals go
// through c. The holder answers the program's terminal queries; this
// Seat's emulator never does.
func Remote(c Conduit, info RemoteInfo) (*Seat, error) {
	cols, rows := info.Cols, info.Rows
	if cols <= 0 {
		cols = DefaultCols
	}
	if rows <= 0 {
		rows = DefaultRows
	}
	if err := checkSize(cols, rows); err != nil {
		return nil, err
	}
	started := info.Started
	if started.IsZero() {
		started = time.Now()
	}
	s := newSeat(&remoteConduit{c: c, detached: make(chan struct{}), answer: true}, info.PID, started, cols, rows)
	if !info.LastOutput.IsZero() {
		s.lastOutput.Store(info.LastOutput.UnixNano())
		s.firstOnce.Do(func() { close(s.firstOutput) })
	}
	s.start()
	return s, nil
}

func newSeat(c conduit, pid int, started time.Time, cols, rows int) *Seat {
	term := &termState{cols: cols, rows: rows, modes: map[int]bool{}}
	s := &Seat{
		c:           c,
		pid:         pid,
		started:     started,
		emuReady:    make(chan struct{}),
		spared:      make(chan struct{}),
		term:        term,
		shown:       term,
		subs:        make(map[*subscriber]struct{}),
		firstOutput: make(chan struct{}),
		answers:     make(chan []byte, answerQueue),
		pumpDone:    make(chan struct{}),
		mirrorDone:  make(chan struct{}),
		poke:        make(chan struct{}, 1),
		exited:      make(chan struct{}),
		done:        make(chan struct{}),
	}
	s.wake = sync.NewCond(&s.mu)
	s.answer.Store(true)
	return s
}

// setEmulator gives the seat its emulator at the size it started with;
// only mirror calls it, before anything else it does.
func (s *Seat) setEmulator(cols, rows int) {
	s.emu = newEmulator(cols, rows)
	close(s.emuReady)
}

// lockEmu takes emuMu once the emulator is built.
func (s *Seat) lockEmu() {
	<-s.emuReady
	s.emuMu.Lock()
}

func (s *Seat) start() {
	go s.pump()
	go s.mirror()
	go s.drainQueries()
	go s.writeAnswers()
	go s.reap()
	if !keepSpare.Load() {
		close(s.spared)
		return
	}
	go func() {
		defer close(s.spared)
		// Once the program has started drawing, and a little after, so
		// that the build takes no core the program's first screens want.
		select {
		case <-s.firstOutput:
			t := time.NewTimer(spareAfter)
			select {
			case <-t.C:
			case <-s.done:
				t.Stop()
			}
		case <-s.done:
		}
		refillSpare()
	}()
}

// withTerm returns env (or the caller's environment when nil) with every
// TERM entry replaced by TERM=xterm-256color.
func withTerm(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if strings.HasPrefix(kv, "TERM=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "TERM="+term)
}

func setNonblock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), true) }); err != nil {
		return err
	}
	return serr
}

// reap waits for the process, records how it ended, lets the pump drain
// what is left (bounded by drainGrace, in case a descendant outside the
// process's session keeps the pty open) and the emulator draw it, then
// releases the conduit and closes done.
func (s *Seat) reap() {
	x := s.c.wait()
	s.exitCode, s.exitSignal, s.lost = x.Code, x.Signal, x.Lost
	if x.Lost != nil {
		s.exitCode, s.exitSignal = -1, ""
	}
	s.exitedFlag.Store(true)
	close(s.exited)

	s.c.drain(time.Now().Add(drainGrace))
	<-s.pumpDone
	<-s.mirrorDone
	s.releaseMaster()
	s.closeAnswerPipe()
	close(s.done)
}

func (s *Seat) releaseMaster() { s.c.close() }

// Lost is nil when the process was seen to end; otherwise why its end was
// not seen: the keeper holding it went away, or ErrDetached. It means
// nothing while the Seat runs.
func (s *Seat) Lost() error {
	select {
	case <-s.exited:
		return s.lost
	default:
		return nil
	}
}

// Detach lets go of a remote process without ending it (the Seat then
// ends with Lost ErrDetached); on a child of this process it is Close.
func (s *Seat) Detach() {
	r, ok := s.c.(*remoteConduit)
	if !ok {
		s.Close()
		return
	}
	r.detach()
	<-s.done
}

// PID is the process id, which is also its process group and session id.
func (s *Seat) PID() int { return s.pid }

// Started is when the process was started.
func (s *Seat) Started() time.Time { return s.started }

// LastOutput is when the process last wrote output; zero until it first does.
func (s *Seat) LastOutput() time.Time {
	n := s.lastOutput.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// FirstOutput is closed when the first byte of output arrives.
func (s *Seat) FirstOutput() <-chan struct{} { return s.firstOutput }

// Done is closed when the process has exited and its output has been
// handed to the subscribers and drawn by the emulator: the screen is final.
func (s *Seat) Done() <-chan struct{} { return s.done }

// OutputDone is closed when the output has ended and every subscriber's
// channel is closed: a channel closed before it was a lagging one.
func (s *Seat) OutputDone() <-chan struct{} { return s.pumpDone }

// Running reports whether the process has not yet exited.
func (s *Seat) Running() bool { return !s.exitedFlag.Load() }

// ExitStatus reports how the process ended: its exit code, or -1 and the
// signal's name ("SIGKILL") when a signal killed it (and -1 with no signal
// when its end was not seen: Lost). ok is false while it runs.
func (s *Seat) ExitStatus() (code int, signal string, ok bool) {
	select {
	case <-s.exited:
		return s.exitCode, s.exitSignal, true
	default:
		return 0, "", false
	}
}

// Signal sends sig to the seat's process group.
func (s *Seat) Signal(sig syscall.Signal) error {
	if !s.Running() {
		return ErrNotRunning
	}
	return s.c.signal(sig)
}

// Stop ends the process and returns when Done. Graceful sends SIGTERM to the
// process group, or SIGHUP when its leader ignores SIGTERM (an interactive
// shell does, and ends on the hang-up a closed terminal sends), then
// SIGKILL 3 s later if it is still running; otherwise SIGKILL at once. It
// returns ctx's error if ctx ends first.
func (s *Seat) Stop(ctx context.Context, graceful bool) error {
	if graceful {
		sig := syscall.SIGTERM
		if ignores(s.pid, syscall.SIGTERM) {
			sig = syscall.SIGHUP
		}
		if err := s.Signal(sig); err != nil && !errors.Is(err, ErrNotRunning) {
			return err
		}
		t := time.NewTimer(killAfter)
		defer t.Stop()
		select {
		case <-s.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	if err := s.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, ErrNotRunning) {
		return err
	}
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ignores reports whether process pid ignores sig, from its SigIgn mask
// in /proc; false when that cannot be read.
func ignores(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}

// Close kills the process group if the process still runs, waits for Done
// and releases everything. It is idempotent and safe to call concurrently.
func (s *Seat) Close() {
	s.closeOnce.Do(func() {
		if s.Running() {
			_ = s.Signal(syscall.SIGKILL)
		}
		// The output is of no use any more: end the pump now rather than
		// wait for the pty to hang up or the drain grace to pass, and draw
		// no more of it.
		s.releaseMaster()
		s.mu.Lock()
		s.discard = true
		s.queue = nil
		s.wake.Signal()
		s.mu.Unlock()
		select { // end a rest
		case s.poke <- struct{}{}:
		default:
		}
		<-s.done
	})
	<-s.done
}
