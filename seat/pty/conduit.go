package pty

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cotal-go/cotal/internal/procid"
)

// conduit is what a Seat's bytes and signals travel through: the pty
// master of a child of this process (ptyConduit), or the socket of the
// keeper holding the process elsewhere (a Conduit, see Remote).
type conduit interface {
	// read waits for output and returns what there is, up to len(buf);
	// an error ends the output (EIO, EOF, a deadline, a lost socket).
	// paint marks bytes that only repaint what the holder's emulator
	// shows: no output of the program's now.
	read(buf []byte) (n int, paint bool, err error)
	write(p []byte) (int, error)
	// writeParts writes each part as a write of its own, in order, and
	// stops at the first that fails; it returns the bytes taken in all.
	writeParts(parts [][]byte) (int, error)
	setSize(cols, rows int) error
	// signal sends sig to the process group while the process runs, and
	// ErrNotRunning once it has ended.
	signal(sig syscall.Signal) error
	// wait blocks until the process has ended, or is known never to be
	// seen ending (lost).
	wait() Exit
	// drain lets reads end by deadline once the process has ended.
	drain(deadline time.Time)
	close()
	// answers says whether the emulator's answers to terminal queries go
	// to the program; false when another emulator answers for it.
	answers() bool
	setAnswers(on bool)
}

// Exit is how a seat's process ended. Lost is set when its end was not
// seen (the keeper holding it went away, or the Seat was detached from
// it): the process may still run, or may have ended unseen.
type Exit struct {
	Code   int
	Signal string // the killing signal's name ("SIGKILL"); "" when it exited
	Lost   error
}

// ptyConduit is a child of this process in a pty it holds the master of.
//
// mu orders signals against the reap: a signal is sent only while the
// child is not reaped (a zombie still holds its pid and group id), so a
// signal never reaches a process that got the pid later.
type ptyConduit struct {
	cmd  *exec.Cmd
	ptmx *os.File
	pid  int

	mu     sync.Mutex
	reaped bool
	once   sync.Once
}

func (c *ptyConduit) read(buf []byte) (int, bool, error) {
	rc, err := c.ptmx.SyscallConn()
	if err != nil {
		return 0, false, err
	}
	n, err := readChunk(rc, buf)
	return n, false, err
}

func (c *ptyConduit) write(p []byte) (int, error) { return c.ptmx.Write(p) }

func (c *ptyConduit) writeParts(parts [][]byte) (int, error) { return writeEach(c.write, parts) }

// writeEach writes the parts one by one through write, stopping at the
// first that fails.
func writeEach(write func([]byte) (int, error), parts [][]byte) (int, error) {
	total := 0
	for _, p := range parts {
		n, err := write(p)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (c *ptyConduit) setSize(cols, rows int) error {
	rc, err := c.ptmx.SyscallConn()
	if err != nil {
		return err
	}
	var ierr error
	// Through Control, not ptmx.Fd, which would put the master back in
	// blocking mode.
	err = rc.Control(func(fd uintptr) {
		ierr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
	})
	if err == nil {
		err = ierr
	}
	return err
}

func (c *ptyConduit) signal(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return ErrNotRunning
	}
	if err := syscall.Kill(-c.pid, sig); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return ErrNotRunning
		}
		return fmt.Errorf("pty: signal %s to process group %d: %w", unix.SignalName(sig), c.pid, err)
	}
	return nil
}

// wait waits for the child to end without reaping it, kills what is left
// of its session (a job it put in the background, in a process group of
// its own or not) while its pid still names it, and only then reaps it.
func (c *ptyConduit) wait() Exit {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, c.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	c.mu.Lock()
	procid.KillAll(procid.Session(c.pid))
	_ = c.cmd.Wait()
	c.reaped = true
	c.mu.Unlock()
	st := c.cmd.ProcessState
	x := Exit{Code: st.ExitCode()}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		x.Signal = unix.SignalName(ws.Signal())
		if x.Signal == "" {
			x.Signal = ws.Signal().String()
		}
	}
	return x
}

func (c *ptyConduit) drain(deadline time.Time) { _ = c.ptmx.SetReadDeadline(deadline) }

func (c *ptyConduit) close() { c.once.Do(func() { _ = c.ptmx.Close() }) }

func (c *ptyConduit) answers() bool   { return true }
func (c *ptyConduit) setAnswers(bool) {}

// Conduit is a process that runs elsewhere, reached through whatever holds
// it (a keeper process, see seat/keeper): the output it writes, the input
// typed into it, its size and its signals. Remote makes a Seat of it.
type Conduit interface {
	// Read returns the process's output in order; an error (io.EOF once
	// it ended) ends it. paint marks bytes that repaint the holder's
	// screen (on a reattach, after a lag) rather than output written now.
	Read(p []byte) (n int, paint bool, err error)
	// Write types p into the process and says how much its pty took.
	Write(p []byte) (int, error)
	Resize(cols, rows int) error
	// Signal sends sig to the process group; ErrNotRunning once it ended.
	Signal(sig syscall.Signal) error
	// AnswerQueries says whether the holder's emulator answers the
	// program's terminal queries (off while a person's terminal does).
	AnswerQueries(on bool) error
	// Wait blocks until the process ended, or until its holder is gone
	// or Close was called (then Exit.Lost says so). Output before the end
	// has been returned by Read before Read fails.
	Wait() Exit
	// Close lets go of the process without ending it.
	Close() error
}

// PartsWriter is a Conduit that takes a paste's parts at once, so it need
// not wait for the holder to type each before it sends the next: each is
// a write of its own on the pty, in order. It returns the bytes the pty
// took in all and the first failure; parts sent before that failure was
// heard of may still have been typed.
type PartsWriter interface {
	WriteParts(parts [][]byte) (int, error)
}

// ErrDetached is the Exit.Lost of a Seat that Detach let go of.
var ErrDetached = errors.New("pty: detached from its holder")

// RemoteInfo is what is known of a remote process as a Seat is made of it.
type RemoteInfo struct {
	PID        int
	Started    time.Time
	Cols, Rows int
	// LastOutput is when the program last wrote, as its holder saw it;
	// zero when it never did.
	LastOutput time.Time
}

// remoteConduit adapts a Conduit.
type remoteConduit struct {
	c        Conduit
	detached chan struct{}
	once     sync.Once
	answer   bool
	amu      sync.Mutex
}

func (r *remoteConduit) read(buf []byte) (int, bool, error) {
	n, paint, err := r.c.Read(buf)
	if n > 0 && err == io.EOF {
		err = nil // the next read says it
	}
	return n, paint, err
}
func (r *remoteConduit) write(p []byte) (int, error) { return r.c.Write(p) }
func (r *remoteConduit) writeParts(parts [][]byte) (int, error) {
	if w, ok := r.c.(PartsWriter); ok {
		return w.WriteParts(parts)
	}
	return writeEach(r.c.Write, parts)
}
func (r *remoteConduit) setSize(cols, rows int) error    { return r.c.Resize(cols, rows) }
func (r *remoteConduit) signal(sig syscall.Signal) error { return r.c.Signal(sig) }
func (r *remoteConduit) wait() Exit {
	x := r.c.Wait()
	select {
	case <-r.detached:
		x.Lost = ErrDetached
	default:
	}
	return x
}
func (r *remoteConduit) drain(time.Time) {}
func (r *remoteConduit) close()          { r.once.Do(func() { _ = r.c.Close() }) }
func (r *remoteConduit) answers() bool   { return false }
func (r *remoteConduit) setAnswers(on bool) {
	r.amu.Lock()
	defer r.amu.Unlock()
	if on != r.answer {
		r.answer = on
		_ = r.c.AnswerQueries(on)
	}
}

// detach marks the end that follows as a detach, then lets go.
func (r *remoteConduit) detach() {
	select {
	case <-r.detached:
	default:
		close(r.detached)
	}
	r.close()
}

// WithMaster calls f with the descriptor of the pty's master side, for
// handing it to another process (see seat/keeper), and returns what f
// returns. The descriptor is valid only during f and stays non-blocking;
// a Seat made by Remote has none here.
func (s *Seat) WithMaster(f func(fd int) error) error {
	c, ok := s.c.(*ptyConduit)
	if !ok {
		return errors.New("pty: the seat's pty is held by another process")
	}
	rc, err := c.ptmx.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
