package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/config"
)

// ErrNotRunning is returned by Stop, and by State.Serving, when no process
// holds the space's store lock: nothing serves the space, whatever
// broker.json says.
var ErrNotRunning = errors.New("mesh is not running")

// State is what a space's store lock and broker.json say. The lock says
// whether the space runs and who runs it; broker.json only how to reach it.
type State struct {
	Space   string
	Running bool // a process holds the store lock
	PID     int  // the lock's holder; 0 when none, or when it cannot be named
	// Record is broker.json as last written; RecordErr why it could not be
	// read (wrapping fs.ErrNotExist when it never was).
	Record    config.BrokerRecord
	RecordErr error
}

// RecordError says that a process runs the space but broker.json does not
// tell how to reach it: not written yet, written by an earlier run, or
// damaged.
type RecordError struct {
	Space string
	PID   int   // the lock's holder
	Err   error // what is wrong with broker.json
	// Starting says the file is missing or an earlier run's, as it is
	// while a mesh starts; Stopping that the holder itself wrote that it
	// stopped and is on its way out; else the file is damaged.
	Starting, Stopping bool
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("mesh %s runs (pid %d) but %v", e.Space, e.PID, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// exitingHolderWait bounds how long Probe waits for a holder that is
// already exiting to let the lock go.
const exitingHolderWait = 3 * time.Second

// Probe reads the state of p's space. A holder whose pid already answers
// as gone is exiting, and the kernel drops its lock only once its last
// thread is down: Probe gives it up to 3 s.
func Probe(p config.Paths) (State, error) {
	s := State{Space: p.Space}
	deadline := time.Now().Add(exitingHolderWait)
	for {
		pid, held, err := broker.LockHolder(p.LockFile())
		if err != nil {
			return s, err
		}
		s.Running, s.PID = held, pid
		if !held || pid <= 0 || broker.PIDAlive(pid) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s.read(p), nil
}

func (s State) read(p config.Paths) State {
	s.Record, s.RecordErr = config.ReadBrokerRecord(p)
	return s
}

// Serving returns broker.json when it describes the running mesh. Else
// the error is ErrNotRunning, or a *RecordError naming what is wrong with
// the file.
func (s State) Serving() (config.BrokerRecord, error) {
	if !s.Running {
		return config.BrokerRecord{}, ErrNotRunning
	}
	e := &RecordError{Space: s.Space, PID: s.PID, Starting: true}
	switch {
	case errors.Is(s.RecordErr, fs.ErrNotExist):
		e.Err = errors.New("it has not written broker.json yet")
	case s.RecordErr != nil:
		e.Err, e.Starting = s.RecordErr, false
	case !s.Record.Stopped.IsZero() && s.PID > 0 && s.Record.PID == s.PID:
		e.Err, e.Starting, e.Stopping = errors.New("it is stopping"), false, true
	case !s.Record.Stopped.IsZero() || (s.PID > 0 && s.Record.PID != s.PID):
		e.Err = fmt.Errorf("its broker.json is still the one of pid %d, an earlier run", s.Record.PID)
	default:
		return s.Record, nil
	}
	return s.Record, e
}

// alreadyRunning is the AlreadyRunningError a running s makes.
func alreadyRunning(s State) *AlreadyRunningError {
	e := &AlreadyRunningError{Space: s.Space, PID: s.PID}
	rec, err := s.Serving()
	var re *RecordError
	if errors.As(err, &re) {
		e.RecordErr = re.Err
	} else {
		e.URL, e.Host, e.TLSPin = rec.URL, rec.Host, rec.TLSPin
	}
	return e
}

// Stop asks the process holding p's store lock to stop (SIGTERM) and
// waits until it has let the lock go, or ctx ends. The lock proves that
// process is the space's mesh: a pid read from broker.json is never
// signalled. Stop returns the holder's pid, or ErrNotRunning. slow, when
// set, is told once when the wait passes 2 s.
func Stop(ctx context.Context, p config.Paths, slow func(pid int)) (int, error) {
	// A request a killed `down --keep-seats` or `--preserve-state` left
	// must not turn this stop into one.
	for _, f := range []string{keepFile(p), preserveFile(p)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
	}
	return stop(ctx, p, slow)
}

// stop signals the mesh to stop and waits until it let go of its store.
func stop(ctx context.Context, p config.Paths, slow func(pid int)) (int, error) {
	s, err := Probe(p)
	if err != nil {
		return 0, err
	}
	if !s.Running {
		return 0, ErrNotRunning
	}
	if s.PID <= 0 {
		return 0, fmt.Errorf("mesh %s runs, but the holder of %s cannot be named from this process", p.Space, p.LockFile())
	}
	if err := syscall.Kill(s.PID, syscall.SIGTERM); err != nil {
		return s.PID, fmt.Errorf("stopping pid %d: %w", s.PID, err)
	}
	slowAt := time.Now().Add(2 * time.Second)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		pid, held, err := broker.LockHolder(p.LockFile())
		if err != nil {
			return s.PID, err
		}
		if !held || (pid > 0 && pid != s.PID) {
			return s.PID, nil // let go; a new holder is another run
		}
		if slow != nil && time.Now().After(slowAt) {
			slow(s.PID)
			slow = nil
		}
		select {
		case <-ctx.Done():
			return s.PID, fmt.Errorf("mesh %s (pid %d) still running: %w", p.Space, s.PID, ctx.Err())
		case <-t.C:
		}
	}
}
